CREATE TABLE "service_accounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"client_email" text NOT NULL,
	"kid" text NOT NULL,
	"public_key_pem" text NOT NULL,
	"public_key_fingerprint" text NOT NULL,
	"api_uri" text,
	"serve_url" text,
	"scopes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"audience" text NOT NULL,
	"issuer" text NOT NULL,
	"jwks_uri" text NOT NULL,
	"router_url" text,
	"router_key_ref" text,
	"internal_api_key_ref" text,
	"telemetry" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"revoke_reason" text,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "stored_secrets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"purpose" text NOT NULL,
	"value_wrapped" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "service_accounts" ADD CONSTRAINT "service_accounts_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "service_accounts_kid" ON "service_accounts" USING btree ("kid");--> statement-breakpoint
CREATE INDEX "service_accounts_customer" ON "service_accounts" USING btree ("customer_id","workspace_id");--> statement-breakpoint
CREATE INDEX "stored_secrets_customer" ON "stored_secrets" USING btree ("customer_id");