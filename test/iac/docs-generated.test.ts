import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { committedDocs, DOCS_DIR, renderDocs } from '../../iac/scripts/gen-docs.ts';
import { DATA_SOURCES, RESOURCES } from '../../iac/provider/registry.ts';
import { HAVE_TERRAFORM, PROVIDER_BLOCK, providerInstalled, terraform, workdir } from './support.ts';

/**
 * Issue 30, defect 7: iac/docs holds one page per resource and data source, generated from the
 * provider schema (bun run iac:docs); a stale or missing page fails here. Every example validates.
 */

const pages = renderDocs();

describe('iac/docs (generated from the provider schema)', () => {
  test('one page per resource and data source, no other page', () => {
    const expected = [
      ...RESOURCES.map((r) => `resources/${r.type.replace('gateway_', '')}.md`),
      ...DATA_SOURCES.map((d) => `data-sources/${d.type.replace('gateway_', '')}.md`),
    ];
    expect(
      Object.keys(pages)
        .filter((p) => p !== 'README.md')
        .sort(),
    ).toEqual(expected.sort());
    expect(committedDocs().sort()).toEqual(expected.sort());
  });

  for (const [path, text] of Object.entries(pages))
    test(`${path} is not stale (run bun run iac:docs)`, () => {
      expect(readFileSync(join(DOCS_DIR, path), 'utf8')).toBe(text);
    });

  test('each resource page documents every argument, the attributes and the import id', () => {
    for (const r of RESOURCES) {
      const page = pages[`resources/${r.type.replace('gateway_', '')}.md`] ?? '';
      for (const a of r.attrs) expect(page, `${r.type}.${a.tf}`).toContain(`- \`${a.tf}\` (`);
      for (const b of r.blocks ?? []) expect(page).toContain(`### Nested block \`${b.tf}\``);
      expect(page).toContain(`terraform import ${r.type}.example ${r.importKeys.map((k) => `<${k}>`).join('/')}`);
    }
    // Bounds and enums are spelled out.
    expect(pages['resources/budget.md']).toContain('one of: `day`, `week`, `month`, `total`');
    expect(pages['resources/api_key.md']).toContain(
      '`expires_in_days` (Number, Optional, Forces replacement) Days until the key expires (int64); unset = no expiry. Allowed: 1 to 3650.',
    );
    expect(pages['resources/provider_connection.md']).toContain('The API never returns `api_key`, `api_key_wo_version`');
  });

  test.skipIf(!HAVE_TERRAFORM)(
    'every example passes terraform validate',
    async () => {
      const built = await providerInstalled();
      const blocks = Object.entries(pages)
        .filter(([p]) => p.startsWith('resources/') || p.startsWith('data-sources/'))
        .map(([, text]) => /```terraform\n([\s\S]*?)```/.exec(text)?.[1] ?? '')
        .map((hcl) => hcl.replace(/variable "secret" \{[\s\S]*?\n\}\n/, ''));
      const secret = 'variable "secret" {\n  type      = string\n  sensitive = true\n  ephemeral = true\n}\n';
      // The project model's example refers to the model's.
      const dir = workdir({ 'main.tf': `${PROVIDER_BLOCK}${secret}${blocks.join('\n')}` });
      const env = { TF_CLI_CONFIG_FILE: built.rc };
      expect((await terraform(dir, ['init', '-input=false', '-no-color'], env)).code).toBe(0);
      const v = await terraform(dir, ['validate', '-no-color'], env);
      expect(v.code, v.out).toBe(0);
    },
    180_000,
  );
});
