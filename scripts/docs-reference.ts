import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { type OpSpec, PERMISSION_TEXT } from '../src/api/op.ts';
import { OPS } from '../src/api/registry.ts';
import { INFERENCE_ERRORS, MANAGEMENT_ERRORS, PASSED_THROUGH } from '../src/core/error-catalog.ts';
import { CONNECT_STATUS, type ConnectCode } from '../src/core/errors.ts';

/**
 * `bun run docs:reference`: writes the generated references of docs/reference/ —
 * management-api.md (every operation of OPS: service, permission, summary, notes, fields) and
 * errors.md (every error code of the inference and management APIs, from src/core/error-catalog.ts,
 * and the log messages of src/). `--check` exits 1 when a committed file differs;
 * test/docs-references.test.ts does the same.
 */

const ROOT = join(import.meta.dir, '..');
export const REFERENCE_DIR = join(ROOT, 'docs', 'reference');
const GENERATED = (source: string) => `<!-- generated from ${source} by \`bun run docs:reference\`; do not edit -->`;

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

interface SchemaView {
  type?: string;
  description?: string;
  properties?: Record<string, SchemaView>;
  required?: string[];
  items?: SchemaView;
  anyOf?: SchemaView[];
  const?: unknown;
  int64?: boolean;
}

/** A short type name for a field's schema. */
const typeName = (s: SchemaView): string => {
  if (s.int64) return 'int64';
  if (s.anyOf) {
    const named = [
      ...new Set(s.anyOf.filter((b) => b.type !== 'null').map((b) => (b.const !== undefined ? JSON.stringify(b.const) : typeName(b)))),
    ];
    return named.join(' \\| ');
  }
  if (s.type === 'array') return `${s.items ? typeName(s.items) : 'any'}[]`;
  return s.type ?? 'any';
};

const fieldRows = (schema: TSchema): string[] => {
  const view: SchemaView = schema;
  const required = new Set(view.required ?? []);
  return Object.entries(view.properties ?? {}).map(
    ([name, f]) => `| \`${name}\` | ${cell(typeName(f))} | ${required.has(name) ? 'yes' : ''} | ${cell(f.description ?? '')} |`,
  );
};

const PERMISSIONS = Object.keys(PERMISSION_TEXT) as (keyof typeof PERMISSION_TEXT)[];

const opSection = (op: OpSpec): string[] => {
  const out = [`### ${op.name}`, '', `\`POST /${op.service}/${op.name}\` — ${op.summary}.`, ''];
  out.push(`- **Permission:** \`${op.permission}\` (${PERMISSION_TEXT[op.permission]}).`);
  if (op.mutates) out.push(`- **Audited:** \`${op.mutates.action}\` on \`${op.mutates.resource}\`.`);
  out.push('');
  if (op.notes) out.push(op.notes, '');
  const input = fieldRows(op.input);
  if (input.length > 0) out.push('| Request field | Type | Required | Meaning |', '|---|---|---|---|', ...input, '');
  else out.push('Request: `{}`.', '');
  const output = fieldRows(op.output);
  if (output.length > 0) out.push('| Response field | Type | Always | Meaning |', '|---|---|---|---|', ...output, '');
  return out;
};

/** docs/reference/management-api.md: every operation, grouped as in the OpenAPI document. */
export const renderManagementReference = (): string => {
  const ops: OpSpec[] = Object.values(OPS);
  const groups = new Map<string, OpSpec[]>();
  for (const op of ops) groups.set(op.group, [...(groups.get(op.group) ?? []), op]);
  const out = [
    '# Management API reference',
    '',
    GENERATED('src/api/ops/*.ts'),
    '',
    `Every operation of the management API (${ops.length}), with who may call it. Each is \`POST /<service>/<Operation>\``,
    'with a JSON body on the management listener (`GATEWAY_ADMIN_PORT`), authenticated by',
    '`Authorization: Bearer <token>`; errors are in [errors.md](errors.md). The running gateway serves the',
    'same operations as OpenAPI 3.1 at `GET /openapi/json` (rendered at `GET /openapi`), with every bound.',
    'Field names are camelCase; snake_case spellings are accepted too.',
    '',
    '## Permissions',
    '',
    '| Permission | Who may call |',
    '|---|---|',
    ...Object.entries(PERMISSION_TEXT).map(([p, text]) => `| \`${p}\` | ${text} |`),
    '',
    'A service account with scope `admin` acts as an admin, and with scope `read` as a member, of every project of its customer; with the default scope `dataplane` it may only call the data plane protocol.',
    '',
    '## Who may do what, by family',
    '',
    `| Family | ${PERMISSIONS.map((p) => `\`${p}\``).join(' | ')} |`,
    `|---|${PERMISSIONS.map(() => '---').join('|')}|`,
    ...[...groups].map(
      ([group, list]) =>
        `| ${group} | ${PERMISSIONS.map((p) =>
          list
            .filter((op) => op.permission === p)
            .map((op) => op.name)
            .join(', '),
        ).join(' | ')} |`,
    ),
    '',
    '## Operations',
    '',
    '| Operation | Service | Permission | Summary |',
    '|---|---|---|---|',
    ...[...groups.values()]
      .flat()
      .map((op) => `| [${op.name}](#${op.name.toLowerCase()}) | \`${op.service}\` | \`${op.permission}\` | ${cell(op.summary)} |`),
    '',
  ];
  for (const [group, list] of groups) {
    out.push(`## ${group}`, '');
    for (const op of list) out.push(...opSection(op));
  }
  return `${out.join('\n').trimEnd()}\n`;
};

/** Every `log.<level>('message'` of src/, with where it is raised. */
export const logMessages = (): { level: string; message: string; file: string }[] => {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) files.push(p);
    }
  };
  walk(join(ROOT, 'src'));
  const seen = new Map<string, { level: string; message: string; file: string }>();
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(/\blog\.(debug|info|warn|error)\(\s*'((?:[^'\\]|\\.)+)'/g)) {
      const level = m[1] ?? '';
      const message = (m[2] ?? '').replace(/\\'/g, "'");
      const key = `${level} ${message}`;
      if (!seen.has(key)) seen.set(key, { level, message, file: relative(ROOT, f) });
    }
  }
  const order = ['error', 'warn', 'info', 'debug'];
  return [...seen.values()].sort((a, b) => order.indexOf(a.level) - order.indexOf(b.level) || a.message.localeCompare(b.message));
};

/** docs/reference/errors.md: every code a client can get, and the log lines an operator sees. */
export const renderErrorsReference = (): string => {
  const out = [
    '# Errors reference',
    '',
    GENERATED('src/core/error-catalog.ts, src/core/errors.ts and the log calls of src/'),
    '',
    '## Inference API',
    '',
    'Errors are `{"error": {"message", "type", "param", "code"}}` (OpenAI format) with the HTTP status below; the',
    'Anthropic Messages endpoint answers `{"type": "error", "error": {"type", "message"}}` with the same status.',
    'Every answer carries `x-request-id` (and echoes `x-client-request-id`); a status with `Retry-After` says when',
    'to retry. A stream that fails after it started ends with an `error` event carrying the same body.',
    `${PASSED_THROUGH}`,
    '',
    '| `code` | Status | `type` | When | What to do |',
    '|---|---|---|---|---|',
    ...INFERENCE_ERRORS.map((e) => `| \`${e.code}\` | ${cell(e.status)} | \`${cell(e.type)}\` | ${cell(e.when)} | ${cell(e.action)} |`),
    '',
    '## Management API',
    '',
    'Errors are `{"code": "<connect code>", "message": "…"}` with the status below (the Connect protocol). The',
    'message names the field for `invalid_argument`; it never contains a secret or a driver’s text. A body larger',
    'than `GATEWAY_ADMIN_MAX_BODY` is refused with an empty 413 before it is read.',
    '',
    '| `code` | Status | When | What to do |',
    '|---|---|---|---|',
    ...(Object.entries(MANAGEMENT_ERRORS) as [ConnectCode, { when: string; action: string }][]).map(
      ([code, e]) => `| \`${code}\` | ${CONNECT_STATUS[code]} | ${cell(e.when)} | ${cell(e.action)} |`,
    ),
    '',
    '## Log messages',
    '',
    'The gateway logs JSON lines on stderr (`GATEWAY_LOG_LEVEL`), never a secret. The fixed messages at `info` and',
    'above, as the `msg` field reads; the other fields of a line say which request, data plane or setting.',
    '',
    '| Level | Message | Raised in |',
    '|---|---|---|',
    ...logMessages()
      .filter((l) => l.level !== 'debug')
      .map((l) => `| ${l.level} | ${cell(l.message)} | \`${l.file}\` |`),
    '',
  ];
  return `${out.join('\n').trimEnd()}\n`;
};

export const REFERENCES: Record<string, () => string> = {
  'management-api.md': renderManagementReference,
  'errors.md': renderErrorsReference,
};

if (import.meta.main) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [file, render] of Object.entries(REFERENCES)) {
    const path = join(REFERENCE_DIR, file);
    const text = render();
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      current = '';
    }
    if (current === text) continue;
    stale++;
    if (check) process.stderr.write(`docs:reference: ${relative(ROOT, path)} is stale (run bun run docs:reference)\n`);
    else {
      writeFileSync(path, text);
      process.stdout.write(`docs:reference: updated ${relative(ROOT, path)}\n`);
    }
  }
  if (check && stale > 0) process.exit(1);
  if (stale === 0) process.stdout.write('docs:reference: up to date\n');
}
