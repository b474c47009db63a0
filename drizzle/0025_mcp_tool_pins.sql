CREATE TABLE "mcp_tool_pins" (
	"profile_uuid" uuid NOT NULL,
	"server_id" text NOT NULL,
	"name" text NOT NULL,
	"pinned_hash" text,
	"seen_hash" text,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mcp_tool_pins_profile_uuid_server_id_name_pk" PRIMARY KEY("profile_uuid","server_id","name")
);
--> statement-breakpoint
ALTER TABLE "mcp_tool_pins" ADD CONSTRAINT "mcp_tool_pins_profile_uuid_mcp_profiles_id_fk" FOREIGN KEY ("profile_uuid") REFERENCES "public"."mcp_profiles"("id") ON DELETE cascade ON UPDATE no action;