import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { OPS } from '../src/api/index.ts';
import { bodyScope, namedScope, projectScope } from '../src/control-plane/connect.ts';
import { managementOps } from '../src/control-plane/index.ts';
import { opInput } from '../iac/provider/api-schemas.ts';

/**
 * Issue 23, item 1: the converted resource groups are declared in the API module (src/api/ops) and
 * the management server binds its handlers to those very specs; the API module and the management
 * services stay on their side of the layering (architecture.md).
 */

const ROOT = join(import.meta.dir, '..');
const mounted = managementOps(
  { db: null as never, secrets: null as never },
  { flushRecords: async () => {}, localStatus: () => undefined },
);
describe('operations served from the API module', () => {
  test('every operation the server mounts is declared in OPS, and every spec of OPS is mounted once', () => {
    const served = mounted.map((d) => d.name);
    expect(served.length).toBeGreaterThanOrEqual(100);
    expect(served.filter((name) => !Object.hasOwn(OPS, name))).toEqual([]);
    expect(Object.keys(OPS).filter((name) => served.filter((s) => s === name).length !== 1)).toEqual([]);
  });

  test('the server mounts each spec as declared: the same schemas, permission and audit', () => {
    for (const [name, spec] of Object.entries(OPS)) {
      const def = mounted.find((d) => d.name === name);
      expect(def, name).toBeDefined();
      if (!def) continue;
      expect(def.service).toBe(spec.service);
      expect(def.input).toBe(spec.input);
      expect(def.output).toBe(spec.output);
      expect(def.permission).toBe(spec.permission);
      const mutates = 'mutates' in spec ? spec.mutates : undefined;
      expect(def.audit ? { action: def.audit.actionType, resource: def.audit.resourceType } : undefined).toEqual(mutates);
    }
  });

  test('Dataplane and Workspace operations come from one template, differing only in their names', () => {
    expect(OPS.CreateDataplane.input.required).toContain('dataplaneId');
    expect(OPS.CreateWorkspace.input.required).toContain('workspaceId');
    expect(Object.keys(OPS.ListWorkspaces.output.properties)).toEqual(['workspaces', 'nextPageToken']);
    expect(Object.keys(OPS.GetDataplane.output.properties)).toEqual(['dataplane']);
    expect(OPS.SetWorkspaceURL.mutates).toEqual({ action: 'UPDATE', resource: 'dataplane' });
  });
});

describe('the Terraform provider reads the same schemas', () => {
  test("its request schemas are the API module's specs", () => {
    for (const name of [
      'CreateServiceAccount',
      'CreateTelemetryConfig',
      'UpdateTelemetryConfig',
      'CreateApiKey',
      'CreateGuardrail',
    ] as const)
      expect(opInput(name)).toBe(OPS[name].input);
  });

  test('every operation the provider reads has a spec in OPS', () => {
    for (const name of ['Register', 'CreateMcpServer'].filter((n) => Object.hasOwn(OPS, n)))
      expect(opInput(name)).toBe(OPS[name as keyof typeof OPS].input);
  });
});

const transpiler = new Bun.Transpiler({ loader: 'ts' });
const importsOf = (file: string) => transpiler.scanImports(readFileSync(file, 'utf8')).map((i) => i.path);

describe('layering', () => {
  test('the API module reaches only TypeBox, re2js (guardrail patterns are checked at save) and the framework-free folders (api, core, governance, canonical)', () => {
    const files = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string): void => {
      if (files.has(file)) return;
      files.add(file);
      for (const path of importsOf(file)) {
        if (path.startsWith('.')) visit(resolve(dirname(file), path));
        else packages.add(path);
      }
    };
    visit(join(ROOT, 'src', 'api', 'index.ts'));
    const outside = [...files].map((f) => relative(ROOT, f)).filter((f) => !/^src\/(api|core|governance|canonical)\//.test(f));
    expect(outside).toEqual([]);
    expect([...packages].filter((p) => !p.startsWith('@sinclair/typebox') && p !== 're2js')).toEqual([]);
    expect([...files].map((f) => relative(ROOT, f))).toContain('src/api/ops/dataplanes.ts');
  });

  test("a body's project scope is read in one place: connect.ts projectScope ('default' when absent, null or empty)", () => {
    expect([undefined, null, ''].map((p) => projectScope('acme', p))).toEqual(Array(3).fill({ customerId: 'acme', projectId: 'default' }));
    expect(projectScope('acme', 'web')).toEqual({ customerId: 'acme', projectId: 'web' });
    // Anything else is passed on as sent, for authorization to refuse.
    expect(bodyScope({ customerId: 7, projectId: 5 })).toEqual({ customerId: 7, projectId: 5 });
    expect([{}, { customerId: null }, { customerId: '', projectId: 'web' }].map(namedScope)).toEqual([undefined, undefined, undefined]);
    expect(namedScope({ customerId: 'acme' })).toEqual({ customerId: 'acme', projectId: 'default' });
    const dir = join(ROOT, 'src', 'control-plane', 'services');
    const copies = readdirSync(dir).filter(
      (f) => f.endsWith('.ts') && /=== '' \? DEFAULT_PROJECT/.test(readFileSync(join(dir, f), 'utf8')),
    );
    expect(copies).toEqual([]);
  });

  test('no management service imports the data plane (money formatting lives in src/core/money.ts)', () => {
    const dir = join(ROOT, 'src', 'control-plane', 'services');
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        importsOf(join(dir, f))
          .filter((p) => p.includes('/data-plane/'))
          .map((p) => `${f} → ${p}`),
      );
    expect(offenders).toEqual([]);
  });
});
