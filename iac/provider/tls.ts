import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/**
 * go-plugin AutoMTLS: the server presents a self-signed certificate made at start (CN and SAN
 * `localhost`, CA, server+client auth, positive serial), announced in the handshake line as
 * base64 DER without padding; it trusts exactly the client certificate Terraform passes in
 * PLUGIN_CLIENT_CERT.
 */
export interface ServerCert {
  certPem: string;
  keyPem: string;
  /** Standard base64 of the DER, no padding (Go's RawStdEncoding). */
  derB64: string;
}

const pem = (label: string, der: ArrayBuffer): string => {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
};

export const makeServerCert = async (): Promise<ServerCert> => {
  const crypto = globalThis.crypto;
  x509.cryptoProvider.set(crypto);
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = await crypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const serial = Buffer.from(crypto.getRandomValues(new Uint8Array(16)));
  serial[0] = (serial[0] ?? 0) & 0x7f; // positive
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: 'CN=localhost, O=gateway',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 24 * 3600_000),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'localhost' }]),
    ],
  });
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    certPem: cert.toString('pem'),
    keyPem: pem('PRIVATE KEY', pkcs8),
    derB64: Buffer.from(cert.rawData).toString('base64').replace(/=+$/, ''),
  };
};
