DROP INDEX "request_records_client_id";--> statement-breakpoint
CREATE INDEX "request_records_client_id" ON "request_records" USING btree ("client_request_id") WHERE client_request_id is not null;