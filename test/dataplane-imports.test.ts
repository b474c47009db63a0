import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** A data plane (`--role data`) holds no database connection: its module graph never reaches the store's driver or the management modules. */
test('the data-plane composition imports neither PGlite, postgres.js, the store nor the management plane, and OpenTelemetry only on demand', () => {
  const transpiler = new Bun.Transpiler({ loader: 'ts' });
  const seen = new Set<string>();
  const packages = new Set<string>();
  const loadedAtStart = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imp of transpiler.scanImports(readFileSync(file, 'utf8'))) {
      if (imp.kind === 'dynamic-import' && imp.path.includes('app.ts')) continue;
      if (imp.path.startsWith('.') && imp.path.endsWith('.ts')) visit(resolve(dirname(file), imp.path));
      else {
        packages.add(imp.path);
        if (imp.kind !== 'dynamic-import') loadedAtStart.add(imp.path);
      }
    }
  };
  visit(join(import.meta.dir, '..', 'src', 'app-data.ts'));
  const ours = [...seen].map((f) => f.slice(f.indexOf('/src/') + 1));
  expect(ours.filter((f) => f.startsWith('src/control-plane/') || f === 'src/store/db.ts' || f === 'src/app.ts')).toEqual([]);
  expect([...packages].filter((p) => p.startsWith('@electric-sql/pglite') || p === 'postgres' || p.startsWith('drizzle-orm/pglite') || p.startsWith('drizzle-orm/postgres-js'))).toEqual([]);
  expect(ours).toContain('src/data-plane/remote/pull.ts');
  // The OpenTelemetry SDK and exporter (most of a data plane's module memory) load only when traces
  // are exported: reached by dynamic import only.
  expect([...loadedAtStart].filter((p) => p.startsWith('@opentelemetry/'))).toEqual([]);
  expect([...packages].filter((p) => p.startsWith('@opentelemetry/')).sort()).toEqual([
    '@opentelemetry/api',
    '@opentelemetry/exporter-trace-otlp-grpc',
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/exporter-trace-otlp-proto',
    '@opentelemetry/otlp-exporter-base/node-http',
    '@opentelemetry/otlp-grpc-exporter-base',
    '@opentelemetry/otlp-transformer',
    '@opentelemetry/resources',
    '@opentelemetry/sdk-metrics',
    '@opentelemetry/sdk-trace-base',
  ]);
});
