CREATE TABLE "scim_groups" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"display_name" text NOT NULL,
	"external_id" text,
	"members" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scim_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"name" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "scim_users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"user_name" text NOT NULL,
	"external_id" text,
	"display_name" text,
	"active" boolean DEFAULT true NOT NULL,
	"resource" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "scim_groups" ADD CONSTRAINT "scim_groups_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_tokens" ADD CONSTRAINT "scim_tokens_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scim_users" ADD CONSTRAINT "scim_users_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "scim_groups_name" ON "scim_groups" USING btree ("customer_uuid","display_name");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_tokens_hash" ON "scim_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "scim_tokens_customer" ON "scim_tokens" USING btree ("customer_uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_users_name" ON "scim_users" USING btree ("customer_uuid","user_name");