CREATE TABLE "a2a_agents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"agent_id" text NOT NULL,
	"card_url" text NOT NULL,
	"card" text NOT NULL,
	"card_sha256" text NOT NULL,
	"name" text NOT NULL,
	"skills" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"rpc_url" text NOT NULL,
	"description" text,
	"auth_type" text NOT NULL,
	"auth_header" text,
	"auth_value_wrapped" text,
	"allow_private" boolean DEFAULT false NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"pinned_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "project_a2a_agents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_uuid" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "project_a2a_agents" ADD CONSTRAINT "project_a2a_agents_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "a2a_agents_agent_id_active" ON "a2a_agents" USING btree ("agent_id") WHERE "a2a_agents"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "project_a2a_agents_unique" ON "project_a2a_agents" USING btree ("project_uuid","agent_id");