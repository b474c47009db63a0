import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config/env.ts';
import { ADMIN_TOKEN, admin, startTestGateway, type TestGateway } from './support/gateway.ts';

/**
 * TLS on the listeners (GATEWAY_TLS_*, GATEWAY_ADMIN_TLS_*), the management listener on its own
 * address (GATEWAY_ADMIN_HOST), its body limit (GATEWAY_ADMIN_MAX_BODY) and the PostgreSQL pool
 * size (GATEWAY_DB_POOL_MAX): served for real, with a self-signed certificate made here by openssl.
 */

const dir = mkdtempSync(join(tmpdir(), 'gw-tls-'));
const certFile = join(dir, 'cert.pem');
const keyFile = join(dir, 'key.pem');
let ca = '';
let tg: TestGateway;

beforeAll(async () => {
  const made = Bun.spawnSync(
    [
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,IP:127.0.0.2',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stderr: 'pipe' },
  );
  if (made.exitCode !== 0) throw new Error(`openssl: ${made.stderr.toString()}`);
  ca = readFileSync(certFile, 'utf8');
  tg = await startTestGateway({
    GATEWAY_TLS_CERT_FILE: certFile,
    GATEWAY_TLS_KEY_FILE: keyFile,
    GATEWAY_ADMIN_TLS_CERT_FILE: certFile,
    GATEWAY_ADMIN_TLS_KEY_FILE: keyFile,
    GATEWAY_ADMIN_HOST: '127.0.0.2',
    GATEWAY_ADMIN_MAX_BODY: '64KiB',
  });
}, 60_000);
afterAll(async () => {
  await tg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const trusted = (): { tls: { ca: string } } => ({ tls: { ca } });

describe('TLS listeners and the admin bind address', () => {
  test('the inference listener serves HTTPS with the configured certificate', async () => {
    expect(tg.url.startsWith('https://127.0.0.1:')).toBe(true);
    const r = await fetch(`${tg.url}/healthz`, trusted());
    expect(r.status).toBe(200);
    // Not trusted without the CA: the certificate really is the one configured (self-signed).
    await expect(fetch(`${tg.url}/healthz`)).rejects.toThrow();
    // Plain HTTP to the TLS port gets no HTTP answer.
    await expect(fetch(`${tg.url.replace('https://', 'http://')}/healthz`)).rejects.toThrow();
  });

  test('the management listener serves HTTPS on GATEWAY_ADMIN_HOST only', async () => {
    const u = new URL(tg.adminUrl);
    expect(u.protocol).toBe('https:');
    expect(u.hostname).toBe('127.0.0.2');
    const r = await fetch(`${tg.adminUrl}${admin('ListCustomers')}`, {
      ...trusted(),
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.status).toBe(200);
    // The inference address does not serve the management port.
    await expect(fetch(`https://127.0.0.1:${u.port}/healthz`, trusted())).rejects.toThrow();
  });

  test('GATEWAY_ADMIN_MAX_BODY: a larger management body is refused with 413, a smaller one is read', async () => {
    const call = (bytes: number) =>
      fetch(`${tg.adminUrl}${admin('CreateCustomer')}`, {
        ...trusted(),
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: 'big', description: 'x'.repeat(bytes) }),
      });
    expect((await call(100 * 1024)).status).toBe(413);
    // 40 KiB is under the limit: read, then refused by validation (description max 1000), not by size.
    const small = await call(40 * 1024);
    expect(small.status).toBe(400);
    expect(((await small.json()) as { code: string }).code).toBe('invalid_argument');
  });
});

describe('settings', () => {
  const base = { GATEWAY_DATA_DIR: 'memory://' };
  test('TLS files come in pairs and must exist; the error names the setting', () => {
    expect(() => loadConfig([], { ...base, GATEWAY_TLS_CERT_FILE: certFile })).toThrow(
      new ConfigError('GATEWAY_TLS_KEY_FILE', 'required with GATEWAY_TLS_CERT_FILE'),
    );
    expect(() => loadConfig([], { ...base, GATEWAY_ADMIN_TLS_KEY_FILE: keyFile })).toThrow(
      new ConfigError('GATEWAY_ADMIN_TLS_CERT_FILE', 'required with GATEWAY_ADMIN_TLS_KEY_FILE'),
    );
    expect(() =>
      loadConfig([], { ...base, GATEWAY_METRICS_TLS_CERT_FILE: join(dir, 'nope.pem'), GATEWAY_METRICS_TLS_KEY_FILE: keyFile }),
    ).toThrow(/GATEWAY_METRICS_TLS_CERT_FILE/);
    const c = loadConfig([], { ...base, GATEWAY_METRICS_TLS_CERT_FILE: certFile, GATEWAY_METRICS_TLS_KEY_FILE: keyFile });
    expect(c.tls).toEqual({ metrics: { certFile, keyFile } });
    expect(c.telemetry.metrics.tls).toEqual({ certFile, keyFile });
  });

  test('the admin host defaults to GATEWAY_HOST; pool size and admin body limit are read and bounded', () => {
    const d = loadConfig([], base);
    expect([d.adminHost, d.dbPoolMax, d.adminMaxBodyBytes, d.tls]).toEqual(['127.0.0.1', 10, 4 * 1024 * 1024, {}]);
    const c = loadConfig([], {
      ...base,
      GATEWAY_HOST: '0.0.0.0',
      GATEWAY_ADMIN_HOST: '10.0.0.5',
      GATEWAY_DB_POOL_MAX: '25',
      GATEWAY_ADMIN_MAX_BODY: '8MiB',
    });
    expect([c.host, c.adminHost, c.dbPoolMax, c.adminMaxBodyBytes]).toEqual(['0.0.0.0', '10.0.0.5', 25, 8 * 1024 * 1024]);
    expect(() => loadConfig([], { ...base, GATEWAY_DB_POOL_MAX: '0' })).toThrow(/GATEWAY_DB_POOL_MAX/);
  });
});
