CREATE TABLE "byok_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"provider" text NOT NULL,
	"customer_uuid" uuid NOT NULL,
	"project_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"user_scope" boolean DEFAULT false NOT NULL,
	"scope_user_id" text DEFAULT '' NOT NULL,
	"secret_wrapped" text NOT NULL,
	"display_suffix" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "byok_keys" ADD CONSTRAINT "byok_keys_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "byok_keys" ADD CONSTRAINT "byok_keys_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "byok_keys_project" ON "byok_keys" USING btree ("project_uuid","created_at");