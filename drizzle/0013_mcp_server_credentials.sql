CREATE TABLE "mcp_server_credentials" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"server_uuid" uuid NOT NULL,
	"server_id" text NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"auth_value_wrapped" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mcp_server_credentials" ADD CONSTRAINT "mcp_server_credentials_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_server_credentials" ADD CONSTRAINT "mcp_server_credentials_server_uuid_mcp_servers_id_fk" FOREIGN KEY ("server_uuid") REFERENCES "public"."mcp_servers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_server_credentials_unique" ON "mcp_server_credentials" USING btree ("project_uuid","server_uuid","user_id");