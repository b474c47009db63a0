import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REFERENCE_DIR, REFERENCES, logMessages } from '../scripts/docs-reference.ts';
import { OPS } from '../src/api/registry.ts';
import { INFERENCE_ERRORS, MANAGEMENT_ERRORS } from '../src/core/error-catalog.ts';
import { CONNECT_STATUS, type ErrorKind, GatewayError } from '../src/core/errors.ts';
import { settingSpecs } from '../src/config/settings.ts';
import { startTestGateway, type TestGateway } from './support/gateway.ts';
import { documentedOps } from './management/support.ts';

/**
 * The generated references stay true: docs/reference/*.md are what `bun run docs:reference`
 * renders; every operation the running gateway documents is in the management reference with its
 * permission; every setting is in the settings table; every error code the source raises is in
 * the errors reference, with the status the error type gives it.
 */

const ROOT = join(import.meta.dir, '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

describe('generated references are current', () => {
  for (const [file, render] of Object.entries(REFERENCES)) {
    test(`docs/reference/${file} is what bun run docs:reference renders`, () => {
      expect(readFileSync(join(REFERENCE_DIR, file), 'utf8')).toBe(render());
    });
  }
});

describe('management API reference', () => {
  let tg: TestGateway;
  beforeAll(async () => {
    tg = await startTestGateway();
  }, 60_000);
  afterAll(async () => tg?.stop());

  test('every operation of the served OpenAPI document appears, with its permission', async () => {
    const doc = read('docs/reference/management-api.md');
    const served = await documentedOps(tg);
    expect(served.size).toBeGreaterThan(100);
    for (const [path, op] of served) {
      const [, service, name] = path.split('/');
      expect({ path, found: doc.includes(`\`POST /${service}/${name}\``) }).toEqual({ path, found: true });
      const section = doc.slice(doc.indexOf(`\`POST /${service}/${name}\``));
      expect(section.slice(0, section.indexOf('\n### ') >>> 0)).toContain(`**Permission:** \`${op.permission}\``);
    }
    // And nothing documented that is not served.
    expect(Object.keys(OPS).length).toBe(served.size);
  });

  test('every operation is in the summary table with its summary', () => {
    const doc = read('docs/reference/management-api.md');
    for (const op of Object.values(OPS))
      expect(doc).toContain(`| [${op.name}](#${op.name.toLowerCase()}) | \`${op.service}\` | \`${op.permission}\` |`);
  });
});

describe('settings reference', () => {
  test('every setting of the schema has a row in the settings table of docs/reference/settings.md', () => {
    const doc = read('docs/reference/settings.md');
    for (const s of settingSpecs()) expect({ name: s.name, row: doc.includes(`| \`${s.name}\` |`) }).toEqual({ name: s.name, row: true });
  });
});

/** The top-level arguments of the call whose `(` is at `open` (strings, templates and brackets skipped). */
const callArgs = (src: string, open: number): string[] => {
  const args: string[] = [];
  let depth = 0;
  let quote = '';
  let start = open + 1;
  for (let i = open + 1; i < src.length; i++) {
    const c = src[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if ((c === ')' || c === ']' || c === '}') && depth > 0) depth--;
    else if (c === ')' || (c === ',' && depth === 0)) {
      args.push(src.slice(start, i).trim());
      start = i + 1;
      if (c === ')') return args;
    }
  }
  return args;
};

/** Every error code literal the source raises: `errorCode: '…'` and invalidRequest's third argument. */
const raisedCodes = (): Set<string> => {
  const codes = new Set<string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !p.endsWith('error-catalog.ts')) {
        const src = readFileSync(p, 'utf8');
        for (const m of src.matchAll(/errorCode:\s*(?:[^'\n]*\?\?\s*)?'([a-z_]+)'/g)) codes.add(m[1] ?? '');
        for (const m of src.matchAll(/\binvalidRequest\(/g)) {
          const third = callArgs(src, (m.index ?? 0) + m[0].length - 1)[2];
          const lit = third ? /^'([a-z_]+)'$/.exec(third) : null;
          if (lit?.[1]) codes.add(lit[1]);
        }
      }
    }
  };
  walk(join(ROOT, 'src'));
  return codes;
};

const KINDS = {
  invalid_request: true,
  unsupported_endpoint: true,
  authentication: true,
  permission: true,
  not_found: true,
  model_not_found: true,
  model_not_routed: true,
  model_not_ready: true,
  conflict: true,
  rate_limit: true,
  upstream_error: true,
  bad_gateway: true,
  unavailable: true,
  timeout: true,
  internal: true,
} satisfies Record<ErrorKind, true>;

describe('errors reference', () => {
  const documented = new Map(INFERENCE_ERRORS.map((e) => [e.code, e]));

  test('every inference error code the source raises is documented (and the scan finds them)', () => {
    const raised = raisedCodes();
    expect(raised.size).toBeGreaterThan(25);
    const missing = [...raised].filter((c) => !documented.has(c));
    expect(missing).toEqual([]);
  });

  test("each error kind's default code is documented with the status and type the error type gives it", () => {
    for (const kind of Object.keys(KINDS) as ErrorKind[]) {
      const e = new GatewayError({ kind, message: '' });
      const doc = documented.get(e.errorCode);
      expect({ kind, code: e.errorCode, documented: doc !== undefined }).toEqual({ kind, code: e.errorCode, documented: true });
      expect({ code: e.errorCode, status: doc?.status.startsWith(String(e.status)) || doc?.status.includes(`or ${e.status}`) }).toEqual({
        code: e.errorCode,
        status: true,
      });
      expect(doc?.type).toContain(e.type);
    }
  });

  test('every Connect code of the management API is documented with its status', () => {
    expect(Object.keys(MANAGEMENT_ERRORS).sort()).toEqual(Object.keys(CONNECT_STATUS).sort());
    const doc = read('docs/reference/errors.md');
    for (const [code, status] of Object.entries(CONNECT_STATUS)) expect(doc).toContain(`| \`${code}\` | ${status} |`);
  });

  test('the log messages of the source are listed', () => {
    const doc = read('docs/reference/errors.md');
    const messages = logMessages().filter((l) => l.level !== 'debug');
    expect(messages.length).toBeGreaterThan(15);
    for (const l of messages) expect(doc).toContain(l.message.replace(/\|/g, '\\|'));
  });
});
