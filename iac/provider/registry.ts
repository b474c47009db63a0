import { DATA_SOURCES_ALL } from './datasources.ts';
import type { DataSourceDef, ResourceDef } from './resource.ts';
import { RESOURCES_CORE } from './resources.ts';
import { RESOURCES_MORE } from './resources-more.ts';
import { telemetryConfig } from './resources-telemetry.ts';
import { byokKey } from './resources-byok.ts';
import { budget, guardrail } from './resources-governance.ts';
import { serviceAccount } from './resources-service-account.ts';
import { RESOURCES_MCP } from './resources-mcp.ts';

/** Every resource and data source the provider serves (contract §6 names). */
export const RESOURCES: ResourceDef[] = [...RESOURCES_CORE, ...RESOURCES_MORE, telemetryConfig, byokKey, budget, guardrail, serviceAccount, ...RESOURCES_MCP];
export const DATA_SOURCES: DataSourceDef[] = [...DATA_SOURCES_ALL];
