import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';

const checks = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The compiled check of a schema, compiled once (schemas of src/api are module constants). */
export const compiled = <S extends TSchema>(schema: S): TypeCheck<S> => {
  const known = checks.get(schema) as TypeCheck<S> | undefined;
  if (known) return known;
  const check = TypeCompiler.Compile(schema);
  checks.set(schema, check);
  return check;
};

/** Where a value first departs from its schema: the path (`/field/…`) and the rule, never the value. */
export const departure = <S extends TSchema>(check: TypeCheck<S>, value: unknown): { path: string; message: string } => {
  const e = check.Errors(value).First();
  return e ? { path: e.path || '/', message: e.message } : { path: '/', message: 'invalid' };
};
