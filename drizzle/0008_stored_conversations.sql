CREATE TABLE "stored_conversation_items" (
	"project_id" uuid NOT NULL,
	"item_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"item" jsonb NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "stored_conversation_items_project_id_item_id_pk" PRIMARY KEY("project_id","item_id")
);
--> statement-breakpoint
CREATE TABLE "stored_conversations" (
	"project_id" uuid NOT NULL,
	"id" text NOT NULL,
	"kind" text NOT NULL,
	"body" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "stored_conversations_project_id_id_pk" PRIMARY KEY("project_id","id")
);
--> statement-breakpoint
CREATE INDEX "stored_conversation_items_owner" ON "stored_conversation_items" USING btree ("project_id","conversation_id");--> statement-breakpoint
CREATE INDEX "stored_conversation_items_expiry" ON "stored_conversation_items" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "stored_conversations_expiry" ON "stored_conversations" USING btree ("expires_at");