import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { DECLARATIONS, type TerraformType } from '../../src/api/index.ts';
import type { TerraformDecl } from '../../src/api/resource.ts';
import { boundsOf, enumValues } from '../provider/explain.ts';
import { DATA_SOURCES, RESOURCES } from '../provider/registry.ts';
import type { BlockDef, DataSourceDef, ResourceDef } from '../provider/resource.ts';
import type { Attr } from '../provider/schema.ts';

/**
 * `bun run iac:docs`: registry-style documentation generated from the provider's schema — one page
 * per resource (iac/docs/resources/<name>.md) and data source (iac/docs/data-sources/<name>.md):
 * description, an example, every argument with its bounds and default, the attributes, the import
 * id and what an import adopts — as `tfplugindocs` does for a registry provider.
 * test/iac/docs-generated.test.ts fails when the committed pages differ (`--check` does the same).
 */

export const DOCS_DIR = join(import.meta.dir, '..', 'docs');

/** Example values (HCL) where the attribute's name and schema do not give a valid one, by declared Terraform type. */
const EXAMPLES: Partial<Record<TerraformType, Record<string, string>>> = {
  gateway_customer: { customer_id: '"acme"' },
  gateway_project: { project_id: '"web"' },
  gateway_model: { model: '"gpt-4o-mini"', provider_name: '"openai"' },
  gateway_route: { model: '"gpt-4o-mini"' },
  gateway_project_member: { user_id: '"alice"', role: '"admin"' },
  gateway_project_model: { model_id: 'gateway_model.example.id' },
  gateway_project_provider: { provider_name: '"openai"' },
  gateway_provider_connection: { name: '"primary"', provider_name: '"openai"' },
  gateway_project_setting: { setting_name: '"rate-limit"', setting_value: 'jsonencode({ requestsPerMinute = 600 })' },
  gateway_guardrail: { name: '"no-pii"', stage: '"both"', kind: '"pii"', pii_types: '["email", "credit_card"]', action: '"redact"' },
  gateway_budget: { name: '"monthly"', limit_usd: '"25"', period: '"month"' },
  gateway_telemetry_config: {
    user_id: '"ops"',
    telemetry_type: '"audit_logs"',
    sink_url: '"https://otel.example.com"',
    protocol: '"http/json"',
    auth_type: '"bearer"',
  },
  gateway_byok_key: { name: '"team-openai"', provider_name: '"PROVIDER_OPENAI"' },
  gateway_mcp_server: { server_id: '"github"', url: '"https://mcp.example.com/mcp"', auth_type: '"bearer"' },
  gateway_mcp_profile: { profile_id: '"dev"' },
  gateway_project_mcp_server: { server_id: '"github"' },
  gateway_a2a_agent: { agent_id: '"planner"', card_url: '"https://agents.example.com/.well-known/agent-card.json"', auth_type: '"bearer"' },
  gateway_project_a2a_agent: { agent_id: '"planner"' },
  gateway_api_key: { name: '"ci"' },
  gateway_workspace: { workspace_id: '"edge"' },
  gateway_dataplane: { dataplane_id: '"edge-dp"' },
  gateway_project_gateway: { workspace_id: '"edge"', project_gateway_id: '"public"' },
  gateway_service_account: { workspace_id: '"edge"' },
};
const BLOCK_EXAMPLES: Record<string, string> = {
  target: '  target {\n    connection = "primary"\n    model      = "gpt-4o-mini"\n  }\n',
  server: '  server {\n    server_id = "github"\n  }\n',
};

/** Values kept as given that the read still fills on an import (hooks-credentials.ts derives them). */
const READ_ON_IMPORT: Partial<Record<TerraformType, string[]>> = { gateway_api_key: ['expires_in_days'] };
/** Resources whose example shows the write-only form of each secret, even an optional one. */
const WRITE_ONLY_SHOWN: readonly TerraformType[] = ['gateway_telemetry_config', 'gateway_mcp_server', 'gateway_a2a_agent'];

/** A declared type's entry of a table keyed by TerraformType. */
const byType = <T>(table: Partial<Record<TerraformType, T>>, type: string): T | undefined =>
  Object.entries(table).find(([t]) => t === type)?.[1];

const declOf = (type: string): TerraformDecl | undefined =>
  Object.values(DECLARATIONS)
    .flatMap((d): TerraformDecl[] => ('terraform' in d ? [d.terraform] : []))
    .find((d) => d.type === type);

/** Whether the resource's Get answers with the field (then an import reads it). */
const returned = (type: string, a: Attr): boolean => {
  if (byType(READ_ON_IMPORT, type)?.includes(a.tf)) return true;
  const d = declOf(type);
  const out: TSchema | undefined = d?.get?.output;
  const env: TSchema | undefined = d?.envelope ? out?.properties?.[d.envelope] : out;
  return Boolean(env?.properties?.[a.read ?? a.api.split('.').pop() ?? a.api]);
};

const exampleValue = (type: string, a: Attr): string => {
  const given = byType(EXAMPLES, type)?.[a.tf];
  if (given) return given;
  if (a.tf === 'customer_id') return '"acme"';
  if (a.tf === 'project_id') return '"default"';
  const values = a.schema ? enumValues(a.schema) : undefined;
  if (values?.[0]) return JSON.stringify(values[0]);
  if (a.kind === 'number') return '1';
  if (a.kind === 'bool') return 'true';
  if (a.kind === 'strlist') return '[]';
  if (a.kind === 'strmap') return '{}';
  if (a.kind === 'json') return 'jsonencode({})';
  return JSON.stringify(a.tf.replace(/_/g, '-'));
};

const hcl = (def: ResourceDef): string => {
  const examples = byType(EXAMPLES, def.type) ?? {};
  const shown = def.attrs.filter((a) => a.required || (a.tf in examples && !a.computed) || (a.tf in examples && a.optional));
  const secrets = def.attrs.filter(
    (a) =>
      a.writeOnly && (def.attrs.find((p) => p.tf === a.tf.slice(0, -3))?.eitherRequired || WRITE_ONLY_SHOWN.some((t) => t === def.type)),
  );
  const width = Math.max(0, ...[...shown, ...secrets.flatMap((s) => [s, { tf: `${s.tf}_version` }])].map((a) => a.tf.length));
  const line = (k: string, v: string) => `  ${k.padEnd(width)} = ${v}\n`;
  let body = shown.map((a) => line(a.tf, exampleValue(def.type, a))).join('');
  for (const s of secrets) body += line(s.tf, 'var.secret') + line(`${s.tf}_version`, '1');
  for (const b of def.blocks ?? []) body += BLOCK_EXAMPLES[b.tf] ?? '';
  const variable = secrets.length
    ? 'variable "secret" {\n  type      = string\n  sensitive = true\n  ephemeral = true # Terraform >= 1.10: the value never enters plan or state\n}\n\n'
    : '';
  return `${variable}resource "${def.type}" "example" {\n${body}}\n`;
};

const typeName = (a: Attr): string =>
  a.kind === 'strlist'
    ? 'List of String'
    : a.kind === 'strmap'
      ? 'Map of String'
      : a.kind === 'number'
        ? 'Number'
        : a.kind === 'bool'
          ? 'Boolean'
          : a.kind === 'json'
            ? 'String, JSON'
            : 'String';

const sentence = (s: string): string => {
  const t = s.trim();
  return t === '' ? '' : `${t[0]?.toUpperCase() ?? ''}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
};

const argument = (a: Attr, resource: boolean): string => {
  const flags = [typeName(a), a.required ? 'Required' : 'Optional'];
  if (a.sensitive) flags.push('Sensitive');
  if (a.writeOnly) flags.push('Write-only, Terraform >= 1.11: never stored in state');
  if (resource && a.forceNew && !a.writeOnly) flags.push('Forces replacement');
  const parts = [sentence(a.description === a.tf ? '' : a.description)];
  const bounds = a.schema ? boundsOf(a.schema) : [];
  if (bounds.length > 0) parts.push(`Allowed: ${bounds.join('; ')}.`);
  if (a.optional && a.computed && !a.keep && resource)
    parts.push('Default: the server’s value when unset; removing the argument keeps the current value.');
  if (a.eitherRequired) parts.push(`One of \`${a.tf}\` and \`${a.tf}_wo\` is required.`);
  return `- \`${a.tf}\` (${flags.join(', ')}) ${parts.filter(Boolean).join(' ')}`.trimEnd();
};

const blockDoc = (b: BlockDef): string =>
  [
    `### Nested block \`${b.tf}\``,
    '',
    `${sentence(b.description)} ${b.min}-${b.max} blocks, kept in the order given.`,
    '',
    ...b.attrs.map((a) => argument({ ...a, forceNew: false }, false)),
  ].join('\n');

const frontMatter = (title: string, description: string): string =>
  `---\npage_title: "${title} - gateway"\ndescription: |-\n  ${description}\n---\n`;

export const resourcePage = (def: ResourceDef): string => {
  const args = def.attrs.filter((a) => a.required || a.optional);
  const attrs = def.attrs.filter((a) => a.computed && !a.optional && !a.required);
  const natural = def.importKeys.map((k) => `<${k}>`).join('/');
  const adopted = def.attrs.filter((a) => (a.keep || a.local) && !a.writeOnly && !returned(def.type, a)).map((a) => `\`${a.tf}\``);
  const read = def.attrs.filter((a) => a.keep && !a.writeOnly && returned(def.type, a)).map((a) => `\`${a.tf}\``);
  return [
    frontMatter(`${def.type} Resource`, def.description),
    `# ${def.type} (Resource)`,
    '',
    sentence(def.description),
    '',
    '## Example Usage',
    '',
    '```terraform',
    hcl(def).trimEnd(),
    '```',
    '',
    '## Argument Reference',
    '',
    ...args.map((a) => argument(a, true)),
    ...(def.blocks ?? []).flatMap((b) => ['', blockDoc(b)]),
    '',
    '## Attribute Reference',
    '',
    'In addition to the arguments:',
    '',
    ...attrs.map((a) => argument({ ...a, required: false, optional: false }, false).replace(', Optional', '')),
    '',
    '## Import',
    '',
    `Import id: \`${natural}\`${def.parseImport ? ' (or the bare UUID)' : ''}.`,
    '',
    '```shell',
    `terraform import ${def.type}.example ${natural}`,
    '```',
    '',
    ...(read.length > 0 ? [`An import reads ${read.join(', ')} from the API.`, ''] : []),
    adopted.length > 0
      ? `The API never returns ${adopted.join(', ')}: after an import ${adopted.length > 1 ? 'they read' : 'it reads'} as null, so the first plan shows the configured ${adopted.length > 1 ? 'ones' : 'value'} as an in-place change. That apply records ${adopted.length > 1 ? 'them' : 'it'} in state from the configuration without calling the API (nothing is re-sent, nothing is replaced); the plan after it is empty.`
      : 'Every argument is read from the API: the plan after an import is empty when the configuration matches.',
    '',
    ...(def.attrs.some((a) => a.local && a.tf.endsWith('_wo_version'))
      ? [
          'When a `*_wo_version` is all there is to adopt (the secret given write-only), the plan after the import is empty: the configured version is taken as the version of the secret the gateway holds, and a warning says so on each plan until the resource is next applied (the state records it then). Until then a changed version cannot be told from the adopted one and sends nothing: apply another change of the resource first, or re-import after rotating.',
          '',
        ]
      : []),
  ].join('\n');
};

export const dataSourcePage = (def: DataSourceDef): string => {
  const inputs = def.attrs.filter((a) => a.required || a.optional);
  const outputs = def.attrs.filter((a) => !a.required && !a.optional);
  const example = inputs
    .filter((a) => a.required)
    .map((a) => `  ${a.tf} = ${a.tf === 'project_id' ? '"default"' : '"acme"'}\n`)
    .join('');
  return [
    frontMatter(`${def.type} Data Source`, def.description),
    `# ${def.type} (Data Source)`,
    '',
    sentence(def.description),
    '',
    '## Example Usage',
    '',
    '```terraform',
    `data "${def.type}" "example" {\n${example}}`,
    '```',
    '',
    '## Argument Reference',
    '',
    ...(inputs.length > 0 ? inputs.map((a) => argument({ ...a, forceNew: false }, false)) : ['None.']),
    '',
    '## Attribute Reference',
    '',
    ...outputs.map((a) => argument({ ...a, required: false, optional: false, forceNew: false }, false).replace(', Optional', '')),
    '',
  ].join('\n');
};

const short = (type: string): string => type.replace(/^gateway_/, '');

/** Every page: path under iac/docs → text. */
export const renderDocs = (): Record<string, string> => {
  const pages: Record<string, string> = {};
  for (const r of RESOURCES) pages[`resources/${short(r.type)}.md`] = resourcePage(r);
  for (const d of DATA_SOURCES) pages[`data-sources/${short(d.type)}.md`] = dataSourcePage(d);
  pages['README.md'] = [
    '# gateway provider documentation',
    '',
    'Generated from the provider schema by `bun run iac:docs` (do not edit; `test/iac/docs-generated.test.ts` fails when stale).',
    'Provider source `gateway.local/gateway/gateway`; arguments `endpoint` (default: env `GATEWAY_ENDPOINT`) and `token` (sensitive; default: env `GATEWAY_TOKEN`).',
    '',
    '## Resources',
    '',
    ...RESOURCES.map((r) => `- [${r.type}](resources/${short(r.type)}.md) — ${sentence(r.description)}`),
    '',
    '## Data sources',
    '',
    ...DATA_SOURCES.map((d) => `- [${d.type}](data-sources/${short(d.type)}.md) — ${sentence(d.description)}`),
    '',
  ].join('\n');
  return pages;
};

/** The committed pages (path → text), for the staleness check. */
export const committedDocs = (): string[] =>
  ['resources', 'data-sources'].flatMap((dir) => {
    try {
      return readdirSync(join(DOCS_DIR, dir)).map((f) => `${dir}/${f}`);
    } catch {
      return [];
    }
  });

if (import.meta.main) {
  const pages = renderDocs();
  if (process.argv.includes('--check')) {
    const { readFileSync } = await import('node:fs');
    const stale = Object.entries(pages).filter(([p, text]) => {
      try {
        return readFileSync(join(DOCS_DIR, p), 'utf8') !== text;
      } catch {
        return true;
      }
    });
    const extra = committedDocs().filter((p) => !(p in pages));
    if (stale.length + extra.length > 0) {
      console.error(`gen-docs: stale ${[...stale.map(([p]) => p), ...extra].join(', ')} (run bun run iac:docs)`);
      process.exit(1);
    }
  } else {
    for (const dir of ['resources', 'data-sources']) rmSync(join(DOCS_DIR, dir), { recursive: true, force: true });
    for (const [p, text] of Object.entries(pages)) {
      mkdirSync(join(DOCS_DIR, p, '..'), { recursive: true });
      writeFileSync(join(DOCS_DIR, p), text);
    }
    console.log(`gen-docs: wrote ${Object.keys(pages).length} pages to ${DOCS_DIR}`);
  }
}
