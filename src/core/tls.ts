/**
 * TLS for a listener: a PEM certificate (chain) file and its PEM private key file, read by Bun
 * when the listener starts (GATEWAY_TLS_*, GATEWAY_ADMIN_TLS_*, GATEWAY_METRICS_TLS_*).
 */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** Bun.serve's `tls` option for these files, or nothing (plain HTTP). */
export const tlsOption = (
  files: TlsFiles | undefined,
): { tls: { cert: ReturnType<typeof Bun.file>; key: ReturnType<typeof Bun.file> } } | Record<string, never> =>
  files ? { tls: { cert: Bun.file(files.certFile), key: Bun.file(files.keyFile) } } : {};

/** `http` or `https`, as the listener serves. */
export const schemeOf = (files: TlsFiles | undefined): 'http' | 'https' => (files ? 'https' : 'http');
