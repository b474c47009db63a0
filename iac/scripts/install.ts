import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import pkg from '../../package.json' with { type: 'json' };

/**
 * `bun run iac:install`: builds the provider binary, installs it into the filesystem mirror
 * (iac/.mirror/gateway.local/gateway/gateway/<version>/<os>_<arch>/) and writes iac/terraform.rc
 * naming the mirror by absolute path, so `terraform init` and `cdktf deploy` need no network.
 */

export const IAC_DIR = resolve(import.meta.dir, '..');
export const VERSION = pkg.version;
export const SOURCE = 'gateway.local/gateway/gateway';

const platform = (): string => {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : process.arch;
  return `${os}_${arch}`;
};

export const install = async (): Promise<{ binary: string; rc: string; ms: number }> => {
  const started = performance.now();
  const outDir = join(IAC_DIR, 'bin');
  mkdirSync(outDir, { recursive: true });
  const built = join(outDir, 'terraform-provider-gateway');
  const proc = Bun.spawnSync(
    ['bun', 'build', '--compile', '--minify', '--bytecode', join(IAC_DIR, 'provider/main.ts'), '--outfile', built],
    {
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  if (proc.exitCode !== 0) throw new Error(`bun build failed:\n${proc.stderr.toString()}`);
  const mirror = join(IAC_DIR, '.mirror');
  const target = join(mirror, SOURCE, VERSION, platform(), `terraform-provider-gateway_v${VERSION}`);
  rmSync(dirname(target), { recursive: true, force: true });
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(built, target);
  chmodSync(target, 0o755);
  const rc = join(IAC_DIR, 'terraform.rc');
  writeFileSync(
    rc,
    `# Written by \`bun run iac:install\`: installs gateway.local/gateway/gateway from the local mirror, no network.
provider_installation {
  filesystem_mirror {
    path    = ${JSON.stringify(mirror)}
    include = ["gateway.local/*/*"]
  }
  direct {
    exclude = ["gateway.local/*/*"]
  }
}
`,
  );
  return { binary: target, rc, ms: Math.round(performance.now() - started) };
};

if (import.meta.main) {
  const r = await install();
  console.log(`provider ${SOURCE} ${VERSION} installed: ${r.binary} (${r.ms} ms)`);
  console.log(`export TF_CLI_CONFIG_FILE=${r.rc}`);
}
