import { DATA_SOURCES_ALL } from './datasources.ts';
import type { DataSourceDef, ResourceDef } from './resource.ts';
import { RESOURCES_DECLARED } from './resources.ts';

/** Every resource and data source the provider serves (contract §6 names). */
export const RESOURCES: ResourceDef[] = [...RESOURCES_DECLARED];
export const DATA_SOURCES: DataSourceDef[] = [...DATA_SOURCES_ALL];
