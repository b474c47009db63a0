CREATE TABLE "project_mcp_servers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"server_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_members" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_models" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"model_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_providers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"provider_name" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_settings" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"setting_name" text NOT NULL,
	"setting_value" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ai_models" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"model" text NOT NULL,
	"provider" text NOT NULL,
	"mode" text,
	"capabilities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"context_window" integer DEFAULT 0 NOT NULL,
	"max_output_tokens" integer DEFAULT 0 NOT NULL,
	"input_price_per_million" double precision DEFAULT 0 NOT NULL,
	"output_price_per_million" double precision DEFAULT 0 NOT NULL,
	"cached_price_per_million" double precision DEFAULT 0 NOT NULL,
	"cache_write_price_per_million" double precision DEFAULT 0 NOT NULL,
	"is_enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "config_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"target" text NOT NULL,
	"kind" text NOT NULL,
	"entity" text NOT NULL,
	"entity_id" text NOT NULL,
	"customer_id" text,
	"project_id" text,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dataplane_status" (
	"dataplane_id" text PRIMARY KEY NOT NULL,
	"applied_revision" bigint DEFAULT 0 NOT NULL,
	"last_poll_at" timestamp with time zone,
	"last_drift_sweep_at" timestamp with time zone,
	"faults" jsonb DEFAULT '[]'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dataplanes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"slug" text NOT NULL,
	"project_id" text DEFAULT 'default' NOT NULL,
	"name" text,
	"description" text,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"url" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "project_gateway_projects" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"gateway_id" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_gateways" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"project_gateway_id" text NOT NULL,
	"name" text,
	"description" text,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"url" text,
	"url_host" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"purpose" text NOT NULL,
	"alg" text NOT NULL,
	"public_key_pem" text NOT NULL,
	"private_key_wrapped" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "user_tokens" (
	"jti" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text,
	"organization_unit" text NOT NULL,
	"role" text NOT NULL,
	"scopes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"name" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	"revoked_reason" text
);
--> statement-breakpoint
CREATE TABLE "admin_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"user_id" text DEFAULT '' NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"key_address" text NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"workspace_id" text,
	"role" text,
	"organization_unit" text,
	"scopes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "request_records" (
	"request_id" uuid PRIMARY KEY NOT NULL,
	"client_request_id" text,
	"received_at" timestamp with time zone NOT NULL,
	"customer_id" text,
	"project_id" text,
	"api_key_id" text,
	"endpoint" text NOT NULL,
	"model" text,
	"provider" text,
	"connection" text,
	"upstream_model" text,
	"http_status" integer NOT NULL,
	"latency_ms" integer NOT NULL,
	"ttfb_ms" integer,
	"stream" boolean DEFAULT false NOT NULL,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"total_tokens" integer DEFAULT 0 NOT NULL,
	"cached_input_tokens" integer DEFAULT 0 NOT NULL,
	"cache_write_tokens" integer DEFAULT 0 NOT NULL,
	"cost_nano_usd" bigint DEFAULT 0 NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"error_code" text,
	"request_body" jsonb,
	"response_body" jsonb
);
--> statement-breakpoint
CREATE TABLE "provider_connections" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"provider" text NOT NULL,
	"base_url" text,
	"api_key_wrapped" text,
	"options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "routes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"model" text NOT NULL,
	"targets" jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"timeout_ms" integer,
	"max_retries" integer,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "customers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"name" text,
	"description" text,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" text NOT NULL,
	"project_id" text NOT NULL,
	"name" text,
	"description" text,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "project_mcp_servers_unique" ON "project_mcp_servers" USING btree ("customer_id","project_id","server_id");--> statement-breakpoint
CREATE UNIQUE INDEX "project_members_unique" ON "project_members" USING btree ("customer_id","project_id","user_id");--> statement-breakpoint
CREATE INDEX "project_members_user" ON "project_members" USING btree ("customer_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "project_models_unique" ON "project_models" USING btree ("customer_id","project_id","model_id");--> statement-breakpoint
CREATE UNIQUE INDEX "project_providers_unique" ON "project_providers" USING btree ("customer_id","project_id","provider_name");--> statement-breakpoint
CREATE UNIQUE INDEX "project_settings_unique" ON "project_settings" USING btree ("customer_id","project_id","setting_name");--> statement-breakpoint
CREATE UNIQUE INDEX "ai_models_model_provider_active" ON "ai_models" USING btree ("model","provider") WHERE "ai_models"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "config_changes_target" ON "config_changes" USING btree ("target","id");--> statement-breakpoint
CREATE UNIQUE INDEX "dataplanes_slug_active" ON "dataplanes" USING btree ("customer_id","slug") WHERE "dataplanes"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "dataplanes_customer" ON "dataplanes" USING btree ("customer_id");--> statement-breakpoint
CREATE UNIQUE INDEX "project_gateway_projects_unique" ON "project_gateway_projects" USING btree ("gateway_id","project_id");--> statement-breakpoint
CREATE INDEX "project_gateway_projects_project" ON "project_gateway_projects" USING btree ("customer_id","project_id");--> statement-breakpoint
CREATE UNIQUE INDEX "project_gateways_slug_active" ON "project_gateways" USING btree ("customer_id","workspace_id","project_gateway_id") WHERE "project_gateways"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "project_gateways_host_active" ON "project_gateways" USING btree ("url_host") WHERE "project_gateways"."deleted_at" is null and "project_gateways"."url_host" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "signing_keys_active" ON "signing_keys" USING btree ("purpose") WHERE "signing_keys"."retired_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_project" ON "api_keys" USING btree ("customer_id","project_id");--> statement-breakpoint
CREATE INDEX "request_records_client_id" ON "request_records" USING btree ("client_request_id");--> statement-breakpoint
CREATE INDEX "request_records_time" ON "request_records" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "request_records_key_time" ON "request_records" USING btree ("api_key_id","received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "provider_connections_name_active" ON "provider_connections" USING btree ("customer_id","project_id","name") WHERE "provider_connections"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "routes_model_active" ON "routes" USING btree ("customer_id","project_id","model") WHERE "routes"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "customers_slug_active" ON "customers" USING btree ("customer_id") WHERE "customers"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "projects_slug_active" ON "projects" USING btree ("customer_id","project_id") WHERE "projects"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "projects_customer" ON "projects" USING btree ("customer_id");