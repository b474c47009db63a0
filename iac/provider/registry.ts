import type { DataSourceDef, ResourceDef } from './resource.ts';
import { RESOURCES_CORE } from './resources.ts';

export const RESOURCES: ResourceDef[] = [...RESOURCES_CORE];
export const DATA_SOURCES: DataSourceDef[] = [];
