import type { TSchema } from '@sinclair/typebox';
import type { OpDef } from '../../src/control-plane/connect.ts';
import { managementOps } from '../../src/control-plane/index.ts';

/**
 * The management API's own operation schemas, by operation name: the single source of every
 * bound, pattern and enum the provider checks. The operation factories only build schemas and
 * closures, so they are called with inert dependencies (no handler ever runs here).
 */
let index: Map<string, OpDef> | undefined;

const ops = (): Map<string, OpDef> => {
  if (!index) {
    const list = managementOps({} as never, { flushRecords: async () => {}, localStatus: () => undefined });
    index = new Map(list.map((o) => [o.name, o]));
  }
  return index;
};

export const opInput = (name: string): TSchema & { properties: Record<string, TSchema>; required?: string[] } => {
  const o = ops().get(name);
  if (!o) throw new Error(`management operation ${name} is not defined`);
  return o.input as TSchema & { properties: Record<string, TSchema>; required?: string[] };
};

/** The schema of one request field (`path` walks nested objects, e.g. enterpriseContext.scopes). */
export const fieldSchema = (opName: string, path: string): TSchema | undefined => {
  let s: TSchema | undefined = opInput(opName);
  for (const part of path.split('.')) {
    const props: Record<string, TSchema> | undefined = (s as { properties?: Record<string, TSchema> } | undefined)?.properties;
    s = props?.[part];
  }
  return s;
};

export const isRequiredField = (opName: string, path: string): boolean => {
  const parts = path.split('.');
  let s: TSchema | undefined = opInput(opName);
  for (let i = 0; i < parts.length - 1; i++) s = (s as { properties?: Record<string, TSchema> } | undefined)?.properties?.[parts[i] ?? ''];
  return ((s as { required?: string[] } | undefined)?.required ?? []).includes(parts[parts.length - 1] ?? '');
};

export const hasField = (opName: string, path: string): boolean => fieldSchema(opName, path) !== undefined;
