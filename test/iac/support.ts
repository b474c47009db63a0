import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { install } from '../../iac/scripts/install.ts';

/** Terraform-driven tests: the real terraform binary, the provider built once per run. */

export const TERRAFORM = process.env.TERRAFORM_BIN ?? '/usr/local/bin/terraform';
export const HAVE_TERRAFORM = existsSync(TERRAFORM);
if (!HAVE_TERRAFORM) console.warn(`test/iac: skipped — no terraform binary at ${TERRAFORM} (set TERRAFORM_BIN)`);

let built: Promise<{ rc: string; ms: number }> | undefined;
/** Builds and installs the provider (once per test run); returns the CLI config path. */
export const providerInstalled = (): Promise<{ rc: string; ms: number }> => {
  built ??= install();
  return built;
};

export interface TfResult {
  code: number;
  out: string;
  ms: number;
}

export const workdir = (files: Record<string, string>): string => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-tf-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
};

export const terraform = async (dir: string, args: string[], env: Record<string, string>): Promise<TfResult> => {
  const started = performance.now();
  const p = Bun.spawn([TERRAFORM, ...args], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      CHECKPOINT_DISABLE: '1',
      TF_IN_AUTOMATION: '1',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: `${out}\n${err}`, ms: Math.round(performance.now() - started) };
};

export const PROVIDER_BLOCK = `terraform {
  required_providers {
    gateway = { source = "gateway.local/gateway/gateway" }
  }
}
provider "gateway" {}
`;
