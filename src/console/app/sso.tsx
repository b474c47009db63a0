import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import type { Session } from './session.ts';

/**
 * "Sign in with SSO" (contract §16). The flow runs on the management listener
 * (control-plane/sso-routes.ts): the button is a link to `/console/sso/login`; the listener sends
 * the browser back to `/console/#sso=<gateway user token>` (or `#sso-error=<message>`), read here
 * once and dropped from the address bar and the history at once.
 */

export interface SsoLanding {
  token?: string;
  error?: string;
}

/** The token (or the error) the sign-in flow left in the fragment; the fragment is removed. */
export const ssoLanding = (): SsoLanding => {
  const m = /^#(sso|sso-error)=(.*)$/.exec(location.hash);
  if (!m) return {};
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  let value = '';
  try {
    value = decodeURIComponent(m[2] ?? '');
  } catch {
    return { error: 'the sign-in answer was malformed: try again' };
  }
  return m[1] === 'sso' ? { token: value } : { error: value };
};

/** The button, shown when the gateway has an identity provider (GET /console/sso). */
export function SsoButton() {
  const [enabled, setEnabled] = useState(false);
  useEffect(() => {
    void fetch('/console/sso').then(
      async (r) => {
        const body: unknown = r.ok ? await r.json() : undefined;
        setEnabled(body !== null && typeof body === 'object' && 'enabled' in body && body.enabled === true);
      },
      () => setEnabled(false),
    );
  }, []);
  if (!enabled) return null;
  return (
    <div class="sso">
      <p>Or sign in with your company's identity provider:</p>
      <a class="button" href="/console/sso/login">
        Sign in with SSO
      </a>
    </div>
  );
}

/** Sign-out of a single sign-on session: its user token is revoked (a platform-admin session is not stored and just ends here). */
export const endSsoSession = async (s: Session): Promise<void> => {
  if (!s.sso || !s.jti || s.admin) return;
  await s.client.call('RevokeUserToken', { jti: s.jti, reason: 'signed out of the console' }).catch((e: unknown) => {
    if (!(e instanceof ApiError)) throw e;
  });
};
