-- Children point at their parent row by id (issue 7, defect 4). Hand-edited from drizzle-kit's output:
-- columns are added nullable, backfilled from the slugs, orphans cleaned, then made NOT NULL.
DROP INDEX "project_mcp_servers_unique";--> statement-breakpoint
DROP INDEX "project_members_unique";--> statement-breakpoint
DROP INDEX "project_models_unique";--> statement-breakpoint
DROP INDEX "project_providers_unique";--> statement-breakpoint
DROP INDEX "project_settings_unique";--> statement-breakpoint
DROP INDEX "dataplanes_slug_active";--> statement-breakpoint
DROP INDEX "project_gateway_projects_unique";--> statement-breakpoint
DROP INDEX "project_gateways_slug_active";--> statement-breakpoint
DROP INDEX "provider_connections_name_active";--> statement-breakpoint
DROP INDEX "routes_model_active";--> statement-breakpoint
ALTER TABLE "project_mcp_servers" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "project_members" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "project_models" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "project_providers" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "project_settings" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "dataplanes" ADD COLUMN "customer_uuid" uuid;--> statement-breakpoint
ALTER TABLE "dataplanes" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "project_gateway_projects" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "project_gateways" ADD COLUMN "customer_uuid" uuid;--> statement-breakpoint
ALTER TABLE "user_tokens" ADD COLUMN "customer_uuid" uuid;--> statement-breakpoint
ALTER TABLE "user_tokens" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "provider_connections" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "routes" ADD COLUMN "project_uuid" uuid;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "customer_uuid" uuid;--> statement-breakpoint
-- Backfill: every child row points at the parent row that had its slug when the child was created
-- (the newest parent created at or before the child; otherwise the newest of that slug).
UPDATE "projects" x SET "customer_uuid" = (
  SELECT c."id" FROM "customers" c WHERE c."customer_id" = x."customer_id"
  ORDER BY (c."created_at" <= x."created_at") DESC, c."created_at" DESC LIMIT 1
);--> statement-breakpoint
DELETE FROM "projects" WHERE "customer_uuid" IS NULL;--> statement-breakpoint
UPDATE "project_members" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "project_models" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "project_providers" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "project_mcp_servers" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "project_settings" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "project_gateway_projects" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "api_keys" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "provider_connections" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "routes" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "dataplanes" x SET "customer_uuid" = (
  SELECT c."id" FROM "customers" c WHERE c."customer_id" = x."customer_id"
  ORDER BY (c."created_at" <= x."created_at") DESC, c."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "dataplanes" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "project_gateways" x SET "customer_uuid" = (
  SELECT c."id" FROM "customers" c WHERE c."customer_id" = x."customer_id"
  ORDER BY (c."created_at" <= x."created_at") DESC, c."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "user_tokens" x SET "customer_uuid" = (
  SELECT c."id" FROM "customers" c WHERE c."customer_id" = x."customer_id"
  ORDER BY (c."created_at" <= x."created_at") DESC, c."created_at" DESC LIMIT 1
);--> statement-breakpoint
UPDATE "user_tokens" x SET "project_uuid" = (
  SELECT p."id" FROM "projects" p WHERE p."customer_id" = x."customer_id" AND p."project_id" = x."project_id"
  ORDER BY (p."created_at" <= x."created_at") DESC, p."created_at" DESC LIMIT 1
) WHERE x."project_id" IS NOT NULL;--> statement-breakpoint
-- Rows without any parent row of their slug were unreachable: remove them.--> statement-breakpoint
DELETE FROM "project_gateway_projects" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "project_members" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "project_models" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "project_providers" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "project_mcp_servers" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "project_settings" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "api_keys" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "provider_connections" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "routes" WHERE "project_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "project_gateway_projects" WHERE "gateway_id" NOT IN (SELECT "id" FROM "project_gateways");--> statement-breakpoint
DELETE FROM "project_gateway_projects" WHERE "gateway_id" IN (SELECT "id" FROM "project_gateways" WHERE "customer_uuid" IS NULL);--> statement-breakpoint
DELETE FROM "project_gateways" WHERE "customer_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "user_tokens" WHERE "customer_uuid" IS NULL;--> statement-breakpoint
DELETE FROM "dataplanes" WHERE "customer_uuid" IS NULL OR "project_uuid" IS NULL;--> statement-breakpoint
-- Orphans left by earlier races: live children of deleted parents get the parent's cascade.
UPDATE "projects" x SET "deleted_at" = c."deleted_at", "updated_at" = c."deleted_at" FROM "customers" c
  WHERE c."id" = x."customer_uuid" AND c."deleted_at" IS NOT NULL AND x."deleted_at" IS NULL;--> statement-breakpoint
UPDATE "dataplanes" x SET "deleted_at" = c."deleted_at", "updated_at" = c."deleted_at" FROM "customers" c
  WHERE c."id" = x."customer_uuid" AND c."deleted_at" IS NOT NULL AND x."deleted_at" IS NULL;--> statement-breakpoint
UPDATE "project_gateways" x SET "deleted_at" = c."deleted_at", "updated_at" = c."deleted_at" FROM "customers" c
  WHERE c."id" = x."customer_uuid" AND c."deleted_at" IS NOT NULL AND x."deleted_at" IS NULL;--> statement-breakpoint
UPDATE "provider_connections" x SET "deleted_at" = p."deleted_at" FROM "projects" p
  WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL AND x."deleted_at" IS NULL;--> statement-breakpoint
UPDATE "routes" x SET "deleted_at" = p."deleted_at" FROM "projects" p
  WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL AND x."deleted_at" IS NULL;--> statement-breakpoint
UPDATE "api_keys" x SET "revoked_at" = p."deleted_at" FROM "projects" p
  WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL AND x."revoked_at" IS NULL;--> statement-breakpoint
DELETE FROM "project_members" x USING "projects" p WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL;--> statement-breakpoint
DELETE FROM "project_models" x USING "projects" p WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL;--> statement-breakpoint
DELETE FROM "project_providers" x USING "projects" p WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL;--> statement-breakpoint
DELETE FROM "project_mcp_servers" x USING "projects" p WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL;--> statement-breakpoint
DELETE FROM "project_settings" x USING "projects" p WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL;--> statement-breakpoint
DELETE FROM "project_gateway_projects" x USING "projects" p WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL;--> statement-breakpoint
DELETE FROM "project_gateway_projects" x USING "project_gateways" g WHERE g."id" = x."gateway_id" AND g."deleted_at" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "project_mcp_servers" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "project_members" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "project_models" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "project_providers" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "project_settings" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "dataplanes" ALTER COLUMN "customer_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "dataplanes" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "project_gateway_projects" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "project_gateways" ALTER COLUMN "customer_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "user_tokens" ALTER COLUMN "customer_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "provider_connections" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "routes" ALTER COLUMN "project_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ALTER COLUMN "customer_uuid" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "project_mcp_servers" ADD CONSTRAINT "project_mcp_servers_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_members" ADD CONSTRAINT "project_members_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_models" ADD CONSTRAINT "project_models_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_providers" ADD CONSTRAINT "project_providers_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_settings" ADD CONSTRAINT "project_settings_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dataplanes" ADD CONSTRAINT "dataplanes_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dataplanes" ADD CONSTRAINT "dataplanes_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_gateway_projects" ADD CONSTRAINT "project_gateway_projects_gateway_id_project_gateways_id_fk" FOREIGN KEY ("gateway_id") REFERENCES "public"."project_gateways"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_gateway_projects" ADD CONSTRAINT "project_gateway_projects_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_gateways" ADD CONSTRAINT "project_gateways_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_tokens" ADD CONSTRAINT "user_tokens_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_tokens" ADD CONSTRAINT "user_tokens_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_connections" ADD CONSTRAINT "provider_connections_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "routes" ADD CONSTRAINT "routes_project_uuid_projects_id_fk" FOREIGN KEY ("project_uuid") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_customer_uuid_customers_id_fk" FOREIGN KEY ("customer_uuid") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dataplanes_customer_uuid" ON "dataplanes" USING btree ("customer_uuid");--> statement-breakpoint
CREATE INDEX "api_keys_project_uuid" ON "api_keys" USING btree ("project_uuid");--> statement-breakpoint
CREATE INDEX "projects_customer_uuid" ON "projects" USING btree ("customer_uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "project_mcp_servers_unique" ON "project_mcp_servers" USING btree ("project_uuid","server_id");--> statement-breakpoint
CREATE UNIQUE INDEX "project_members_unique" ON "project_members" USING btree ("project_uuid","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "project_models_unique" ON "project_models" USING btree ("project_uuid","model_id");--> statement-breakpoint
CREATE UNIQUE INDEX "project_providers_unique" ON "project_providers" USING btree ("project_uuid","provider_name");--> statement-breakpoint
CREATE UNIQUE INDEX "project_settings_unique" ON "project_settings" USING btree ("project_uuid","setting_name");--> statement-breakpoint
CREATE UNIQUE INDEX "dataplanes_slug_active" ON "dataplanes" USING btree ("customer_uuid","slug") WHERE "dataplanes"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "project_gateway_projects_unique" ON "project_gateway_projects" USING btree ("gateway_id","project_uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "project_gateways_slug_active" ON "project_gateways" USING btree ("customer_uuid","workspace_id","project_gateway_id") WHERE "project_gateways"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "provider_connections_name_active" ON "provider_connections" USING btree ("project_uuid","name") WHERE "provider_connections"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "routes_model_active" ON "routes" USING btree ("project_uuid","model") WHERE "routes"."deleted_at" is null;
--> statement-breakpoint
-- User tokens issued in a customer or project that is deleted stop working (a re-created slug is a new tenant).
UPDATE "user_tokens" x SET "revoked_at" = c."deleted_at", "revoked_reason" = 'customer deleted' FROM "customers" c
  WHERE c."id" = x."customer_uuid" AND c."deleted_at" IS NOT NULL AND x."revoked_at" IS NULL;--> statement-breakpoint
UPDATE "user_tokens" x SET "revoked_at" = p."deleted_at", "revoked_reason" = 'project deleted' FROM "projects" p
  WHERE p."id" = x."project_uuid" AND p."deleted_at" IS NOT NULL AND x."revoked_at" IS NULL;
