import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID Provider for the single sign-on tests: panva's `oidc-provider` (certified), on a
 * loopback port, with its development login form (any login; the password is not checked) and one
 * client for the gateway. Accounts' claims come from `accounts` (login → claims); an unknown login
 * gets `email: <login>`. Its signing key is exported so a test can mint ID tokens it signed.
 */

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The provider's RS256 signing key (private JWK, `kid` set). */
  signingKey: CryptoKey;
  kid: string;
  /** Registers the gateway's redirect URI (known once the gateway listens). */
  setRedirectUri(uri: string): void;
  accounts: Map<string, Record<string, unknown>>;
  close(): Promise<void>;
}

export const startIdp = async (): Promise<TestIdp> => {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handler) handler(req, res);
    else {
      res.statusCode = 503;
      res.end('not ready');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the identity provider did not listen');
  const port = address.port;
  const issuer = `http://127.0.0.1:${port}`;
  const pair = await generateKeyPair('RS256', { extractable: true });
  const kid = 'idp-key-1';
  const jwk: JWK = { ...(await exportJWK(pair.privateKey)), kid, alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, Record<string, unknown>>();
  const clientId = 'gateway-console';
  const clientSecret = 'idp-client-secret-0123456789abcdef';
  const build = (redirectUri: string) => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys: [jwk] },
      cookies: { keys: ['idp-cookie-key-0123456789'] },
      // The ID token carries the scopes' claims (email, groups), as Okta and Entra ID can be set to.
      conformIdTokenClaims: false,
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
      pkce: { required: () => true },
      features: { devInteractions: { enabled: true } },
      findAccount: (_ctx, id) => ({
        accountId: id,
        claims: () => ({ sub: id, email: id, email_verified: true, ...(accounts.get(id) ?? {}) }),
      }),
    });
    handler = provider.callback();
  };
  return {
    issuer,
    clientId,
    clientSecret,
    signingKey: pair.privateKey,
    kid,
    accounts,
    setRedirectUri: build,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
