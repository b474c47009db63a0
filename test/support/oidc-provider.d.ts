/**
 * The part of `oidc-provider` (a devDependency that ships no types) the single sign-on tests use:
 * test/support/oidc-idp.ts. See https://github.com/panva/node-oidc-provider/blob/main/docs/README.md.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type { JWK } from 'jose';

  interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
  }

  interface Account {
    accountId: string;
    claims: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients?: ClientMetadata[];
    jwks?: { keys: JWK[] };
    cookies?: { keys: string[] };
    conformIdTokenClaims?: boolean;
    claims?: Record<string, string[]>;
    pkce?: { required?: () => boolean };
    features?: Record<string, { enabled: boolean }>;
    findAccount?: (ctx: unknown, id: string) => Account | Promise<Account | undefined> | undefined;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
