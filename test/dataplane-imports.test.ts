import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** A data plane (`--role data`) holds no database connection: its module graph never reaches the store's driver or the management modules. */
test('the data-plane composition imports neither PGlite, postgres.js, the store nor the management plane, and OpenTelemetry only on demand', () => {
  const transpiler = new Bun.Transpiler({ loader: 'ts' });
  const seen = new Set<string>();
  const eagerFiles = new Set<string>();
  const packages = new Set<string>();
  const loadedAtStart = new Set<string>();
  // `eager`: loaded at start (reached by static imports only); a file reached by a dynamic import loads on demand.
  const visit = (file: string, eager: boolean): void => {
    if (eager ? eagerFiles.has(file) : seen.has(file)) return;
    seen.add(file);
    if (eager) eagerFiles.add(file);
    for (const imp of transpiler.scanImports(readFileSync(file, 'utf8'))) {
      if (imp.kind === 'dynamic-import' && imp.path.includes('app.ts')) continue;
      const staticImport = imp.kind !== 'dynamic-import';
      if (imp.path.startsWith('.') && imp.path.endsWith('.ts')) visit(resolve(dirname(file), imp.path), eager && staticImport);
      else {
        packages.add(imp.path);
        if (eager && staticImport) loadedAtStart.add(imp.path);
      }
    }
  };
  visit(join(import.meta.dir, '..', 'src', 'app-data.ts'), true);
  const ours = [...seen].map((f) => f.slice(f.indexOf('/src/') + 1));
  expect(ours.filter((f) => f.startsWith('src/control-plane/') || f === 'src/store/db.ts' || f === 'src/app.ts')).toEqual([]);
  expect(
    [...packages].filter(
      (p) =>
        p.startsWith('@electric-sql/pglite') ||
        p === 'postgres' ||
        p.startsWith('drizzle-orm/pglite') ||
        p.startsWith('drizzle-orm/postgres-js'),
    ),
  ).toEqual([]);
  expect(ours).toContain('src/data-plane/remote/pull.ts');
  // The OpenTelemetry SDK and exporter (most of a data plane's module memory) load only when traces
  // are exported: reached by dynamic import only.
  expect([...loadedAtStart].filter((p) => p.startsWith('@opentelemetry/'))).toEqual([]);
  // The MCP SDK (its schema validators) loads with the first MCP call only: a data plane that serves no MCP never loads it.
  expect([...loadedAtStart].filter((p) => p.startsWith('@modelcontextprotocol/'))).toEqual([]);
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
