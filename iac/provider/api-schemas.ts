import type { TObject, TSchema } from '@sinclair/typebox';
import { OPS } from '../../src/api/index.ts';

/**
 * The management API's own operation schemas, by operation name: the single source of every
 * bound, pattern and enum the provider checks. Read from the API module (src/api), which holds
 * the specs the server binds its handlers to; the provider loads no server code.
 */
const INPUTS: ReadonlyMap<string, TObject> = new Map([...Object.values(OPS).map((spec): [string, TObject] => [spec.name, spec.input])]);

export const opInput = (name: string): TObject => {
  const input = INPUTS.get(name);
  if (!input) throw new Error(`management operation ${name} is not defined`);
  return input;
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
