import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, type Json } from '../../api/client.ts';
import { AuditPage } from './audit.tsx';
import { messageOfError } from './fields.ts';
import { A2A_AGENTS, API_KEYS, BUDGETS, GUARDRAILS, MCP_PROFILES, MCP_SERVERS, PROJECT_A2A_AGENTS, TARGET_HEALTH } from './pages-more.tsx';
import {
  CATALOG,
  CONNECTIONS,
  CUSTOMERS,
  MEMBERS,
  PROJECT_MCP_SERVERS,
  PROJECT_MODELS,
  PROJECT_PROVIDERS,
  PROJECTS,
  ROUTES,
} from './pages.tsx';
import { FilesPage } from './files.tsx';
import { SCIM_TOKENS, USER_TOKENS } from './pages-identity.tsx';
import { BYOK_KEYS, MCP_CREDENTIALS, SERVICE_ACCOUNTS, TELEMETRY_CONFIGS } from './pages-ops.tsx';
import { PlaygroundPage } from './playground.tsx';
import { PlanesPage } from './planes.tsx';
import { RecordsPage } from './records.tsx';
import { type ResourceDef, ResourcePage, type Scope } from './resource.tsx';
import { forgetToken, type Session, saveToken, savedToken, sessionOf } from './session.ts';
import { SettingsPage } from './settings.tsx';
import { endSsoSession, SsoButton, ssoLanding } from './sso.tsx';
import { UsagePage } from './usage.tsx';

/** The console's shell: sign-in, the customer and project in view, navigation by `#/page`. */

interface PageEntry {
  id: string;
  title: string;
  adminOnly?: boolean;
  needsProject?: boolean;
  defs?: ResourceDef[];
  /** A page that is not a list of resources. */
  view?: (scope: Scope, changed: () => void) => preact.ComponentChildren;
}

export const PAGES: PageEntry[] = [
  { id: 'status', title: 'Status', view: (s, changed) => <PlanesPage scope={s} onChanged={changed} /> },
  { id: 'customers', title: 'Customers', adminOnly: true, defs: [CUSTOMERS] },
  { id: 'projects', title: 'Projects', defs: [PROJECTS] },
  {
    id: 'project',
    title: 'Members & assignments',
    needsProject: true,
    defs: [MEMBERS, PROJECT_MODELS, PROJECT_PROVIDERS, PROJECT_MCP_SERVERS],
  },
  { id: 'settings', title: 'Settings', needsProject: true, view: (s) => <SettingsPage scope={s} /> },
  { id: 'catalog', title: 'Catalog', adminOnly: true, defs: [CATALOG] },
  { id: 'connections', title: 'Connections', needsProject: true, defs: [CONNECTIONS] },
  { id: 'routes', title: 'Routes', needsProject: true, defs: [ROUTES] },
  { id: 'health', title: 'Target health', needsProject: true, defs: [TARGET_HEALTH] },
  { id: 'keys', title: 'API keys', needsProject: true, defs: [API_KEYS] },
  { id: 'playground', title: 'Playground', needsProject: true, view: (s) => <PlaygroundPage scope={s} /> },
  { id: 'byok', title: 'BYOK keys', needsProject: true, defs: [BYOK_KEYS] },
  { id: 'budgets', title: 'Budgets', needsProject: true, defs: [BUDGETS] },
  { id: 'guardrails', title: 'Guardrails', needsProject: true, defs: [GUARDRAILS] },
  { id: 'mcp', title: 'MCP', needsProject: true, defs: [MCP_SERVERS, MCP_PROFILES, MCP_CREDENTIALS] },
  { id: 'a2a', title: 'A2A agents', needsProject: true, defs: [A2A_AGENTS, PROJECT_A2A_AGENTS] },
  { id: 'usage', title: 'Usage', needsProject: true, view: (s) => <UsagePage scope={s} /> },
  { id: 'records', title: 'Records', needsProject: true, view: (s) => <RecordsPage scope={s} /> },
  { id: 'files', title: 'Files & batches', needsProject: true, view: (s) => <FilesPage scope={s} /> },
  { id: 'telemetry', title: 'Telemetry', adminOnly: true, defs: [TELEMETRY_CONFIGS] },
  { id: 'service-accounts', title: 'Service accounts', defs: [SERVICE_ACCOUNTS] },
  { id: 'audit', title: 'Audit log', adminOnly: true, view: (s) => <AuditPage session={s.session} /> },
  { id: 'user-tokens', title: 'User tokens', defs: [USER_TOKENS] },
  { id: 'scim', title: 'SCIM tokens', adminOnly: true, defs: [SCIM_TOKENS] },
];

/** `#/page/customer/project`: the page and the customer and project in view, so a reload or a link keeps them. */
const fromHash = (): { page: string; customerId?: string; projectId?: string } => {
  const [page, customerId, projectId] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { page: page || 'status', ...(customerId ? { customerId } : {}), ...(projectId ? { projectId } : {}) };
};
/** No customer yet: the page alone (a project without its customer would read back as a customer). */
const hashOf = (page: string, customerId: string, projectId: string): string =>
  `#/${[page, ...(customerId ? [customerId, ...(projectId ? [projectId] : [])] : [])].map(encodeURIComponent).join('/')}`;

function SignIn({ onSignedIn, ssoError }: { onSignedIn: (s: Session) => void; ssoError?: string }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const s = sessionOf(token.trim());
    try {
      await s.client.call('GetConfigStatus', {});
      saveToken(s.token);
      onSignedIn(s);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      setError(messageOfError(err.message));
    }
  };
  return (
    <main id="main" class="signin">
      <h1>AI gateway console</h1>
      <form onSubmit={submit}>
        <p>Sign in with the platform-admin token or a user token. Every call is the management API with this token.</p>
        <div class={`field${error ? ' invalid' : ''}`}>
          <label for="token">Token</label>
          <input
            id="token"
            type="password"
            autoComplete="off"
            required
            value={token}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? 'token-error' : undefined}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
          {error ? (
            <span id="token-error" class="field-error" role="alert">
              {error}
            </span>
          ) : null}
        </div>
        <button type="submit">Sign in</button>
      </form>
      {ssoError ? (
        <p class="form-error" role="alert">
          Single sign-on failed: {ssoError}
        </p>
      ) : null}
      <SsoButton />
    </main>
  );
}

const slugs = (items: Json | undefined, key: string): string[] =>
  (Array.isArray(items) ? items : []).flatMap((i) =>
    i !== null && typeof i === 'object' && !Array.isArray(i) && typeof i[key] === 'string' ? [i[key]] : [],
  );

function Picker({
  id,
  label,
  options,
  value,
  onChange,
}: {
  id: string;
  label: string;
  options: string[];
  value: string;
  onChange: (v: string) => void;
}) {
  return (
    <span class="picker">
      <label for={id}>{label}</label>
      <select id={id} value={options.includes(value) ? value : ''} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.length === 0 ? <option value="">(none)</option> : null}
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </span>
  );
}

/** What a link (`#/page/customer/project`) asks for that this token cannot show, in words; undefined when it can. */
const refusedCustomer = (session: Session, wanted: string | undefined): string | undefined =>
  wanted !== undefined && !session.admin && session.customerId !== undefined && wanted !== session.customerId
    ? `The link is for customer "${wanted}", but this token is for customer "${session.customerId}" only: showing "${session.customerId}".`
    : undefined;

function Console({ session, signOut }: { session: Session; signOut: () => void }) {
  const [page, setPage] = useState(fromHash().page);
  const [customers, setCustomers] = useState<string[]>(session.customerId ? [session.customerId] : []);
  const [customerId, setCustomerId] = useState(session.customerId ?? fromHash().customerId ?? '');
  const [projects, setProjects] = useState<string[]>([]);
  const [projectId, setProjectId] = useState(fromHash().projectId ?? session.projectId ?? 'default');
  const [roles, setRoles] = useState<ReadonlyMap<string, string> | undefined>(session.admin ? undefined : new Map());
  const [tick, setTick] = useState(0);
  // A pasted or followed link switches the customer and project in view, or says why it cannot.
  const [notice, setNotice] = useState(() => refusedCustomer(session, fromHash().customerId) ?? '');
  /** The customer and project the last link asked for, until the lists say whether they exist. */
  const linked = useRef(fromHash());
  const current = useRef({ customerId, projectId, customers, projects });
  current.current = { customerId, projectId, customers, projects };
  useEffect(() => {
    const onHash = () => {
      const h = fromHash();
      setPage(h.page);
      linked.current = h;
      const refused = refusedCustomer(session, h.customerId);
      if (refused) return setNotice(refused);
      const now = current.current;
      if (session.admin && h.customerId !== undefined && now.customers.length > 0 && !now.customers.includes(h.customerId))
        return setNotice(`There is no customer "${h.customerId}" (from the link): showing "${now.customerId}".`);
      const customerChanged = h.customerId !== undefined && h.customerId !== now.customerId;
      const projectChanged = h.projectId !== undefined && h.projectId !== now.projectId;
      // Another customer's projects are checked once listed (below); this customer's are known.
      if (!customerChanged && projectChanged && h.projectId !== undefined && now.projects.length > 0 && !now.projects.includes(h.projectId))
        return setNotice(
          `Customer "${now.customerId}" has no project "${h.projectId}" this token can see (from the link): showing "${now.projectId}".`,
        );
      if (customerChanged && h.customerId !== undefined) setCustomerId(h.customerId);
      if (projectChanged && h.projectId !== undefined) setProjectId(h.projectId);
      if (customerChanged || projectChanged)
        setNotice(`Switched to customer "${h.customerId ?? now.customerId}", project "${h.projectId ?? now.projectId}" (from the link).`);
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, [session]);
  useEffect(() => {
    if (!session.admin) return;
    void session.client.callJson('ListCustomers', { pageSize: 1000 }).then(
      (a) => {
        const list = slugs(a.customers, 'customerId');
        setCustomers(list);
        const c = current.current.customerId;
        if (list.includes(c)) return;
        const next = list[0] ?? '';
        if (c && linked.current.customerId === c) setNotice(`There is no customer "${c}" (from the link): showing "${next}".`);
        setCustomerId(next);
      },
      () => setCustomers([]),
    );
  }, [session, tick]);
  useEffect(() => {
    if (!customerId) return setProjects([]);
    void session.client.callJson('ListProjects', { customerId, pageSize: 1000 }).then(
      (a) => {
        const list = slugs(a.projects, 'projectId');
        setProjects(list);
        const p = current.current.projectId;
        if (list.includes(p)) return;
        const next = list[0] ?? '';
        if (p && linked.current.projectId === p)
          setNotice(`Customer "${customerId}" has no project "${p}" this token can see (from the link): showing "${next}".`);
        setProjectId(next);
      },
      () => setProjects([]),
    );
  }, [session, customerId, tick]);
  // A user's roles in the project in view and in `default` (what customer-wide writes are checked
  // against): pages offer only the writes the token may make.
  useEffect(() => {
    if (session.admin || !session.userId || !customerId || !projectId) return;
    const userId = session.userId;
    setRoles(new Map());
    const wanted = [...new Set([projectId, 'default'])];
    void Promise.all(
      wanted.map((p) =>
        session.client.callJson('ListProjectMembers', { customerId, projectId: p, pageSize: 1000 }).then(
          (a) => {
            const me = (Array.isArray(a.members) ? a.members : []).find(
              (m) => m !== null && typeof m === 'object' && !Array.isArray(m) && m.userId === userId,
            );
            const role = me !== null && typeof me === 'object' && !Array.isArray(me) ? me.role : undefined;
            return [p, typeof role === 'string' ? role : ''] as const;
          },
          () => [p, ''] as const,
        ),
      ),
    ).then((found) => setRoles(new Map(found.filter(([, r]) => r !== ''))));
  }, [session, customerId, projectId, tick]);
  useEffect(() => {
    const hash = hashOf(page, customerId, projectId);
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }, [page, customerId, projectId]);
  const scope: Scope = useMemo(
    () => ({ session, customerId, projectId, ...(roles ? { roles } : {}) }),
    [session, customerId, projectId, roles],
  );
  const visible = PAGES.filter((p) => session.admin || !p.adminOnly);
  const shown = visible.find((p) => p.id === page) ?? visible[0];
  const changed = () => setTick((t) => t + 1);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <h1>AI gateway console</h1>
        <div class="context">
          {session.admin ? (
            <Picker id="pick-customer" label="Customer" options={customers} value={customerId} onChange={setCustomerId} />
          ) : (
            <span>Customer {customerId}</span>
          )}
          <Picker id="pick-project" label="Project" options={projects} value={projectId} onChange={setProjectId} />
        </div>
        <div class="who">
          <span>{session.admin ? 'Platform admin' : `User ${session.userId ?? ''}`}</span>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav aria-label="Console pages">
        <ul>
          {visible.map((p) => (
            <li key={p.id}>
              <a href={hashOf(p.id, customerId, projectId)} aria-current={shown?.id === p.id ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {notice ? (
          <p class="notice" role="status">
            {notice}{' '}
            <button type="button" class="secondary" onClick={() => setNotice('')}>
              Dismiss
            </button>
          </p>
        ) : null}
        {!shown ? null : shown.needsProject && !(customerId && projectId) ? (
          <p>Choose a customer and a project first.</p>
        ) : shown.view ? (
          <div key={`${shown.id}-${customerId}-${projectId}`}>{shown.view(scope, changed)}</div>
        ) : (
          (shown.defs ?? []).map((d) =>
            d.scope === 'customer' && !customerId ? (
              <p key={d.list}>Choose a customer first.</p>
            ) : (
              <ResourcePage key={`${d.list}-${customerId}-${projectId}`} def={d} scope={scope} onChanged={changed} />
            ),
          )
        )}
      </main>
    </>
  );
}

export function App() {
  const [landing] = useState(ssoLanding);
  const [session, setSession] = useState<Session | undefined>(() => {
    if (landing.token) saveToken(landing.token);
    const t = savedToken();
    return t ? sessionOf(t) : undefined;
  });
  if (!session) return <SignIn onSignedIn={setSession} {...(landing.error ? { ssoError: landing.error } : {})} />;
  return (
    <Console
      session={session}
      signOut={() => {
        void endSsoSession(session);
        forgetToken();
        location.hash = '';
        setSession(undefined);
      }}
    />
  );
}
