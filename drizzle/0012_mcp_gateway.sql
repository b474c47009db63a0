CREATE TABLE "mcp_profiles" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"profile_id" text NOT NULL,
	"description" text,
	"servers" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mcp_servers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"server_id" text NOT NULL,
	"url" text NOT NULL,
	"transport" text NOT NULL,
	"description" text,
	"auth_type" text NOT NULL,
	"auth_header" text,
	"auth_value_wrapped" text,
	"allow_private" boolean DEFAULT false NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "mcp_profiles" ADD CONSTRAINT "mcp_profiles_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_profiles_unique" ON "mcp_profiles" USING btree ("project_uuid","profile_id");--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_servers_server_id_active" ON "mcp_servers" USING btree ("server_id") WHERE "mcp_servers"."deleted_at" is null;