import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, type Json } from '../../api/client.ts';
import { AuditPage } from './audit.tsx';
import { messageOfError } from './fields.ts';
import { API_KEYS, BUDGETS, GUARDRAILS, MCP_PROFILES, MCP_SERVERS, TARGET_HEALTH } from './pages-more.tsx';
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
import { PlanesPage } from './planes.tsx';
import { RecordsPage } from './records.tsx';
import { type ResourceDef, ResourcePage, type Scope } from './resource.tsx';
import { forgetToken, type Session, saveToken, savedToken, sessionOf } from './session.ts';
import { SettingsPage } from './settings.tsx';
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
  { id: 'budgets', title: 'Budgets', needsProject: true, defs: [BUDGETS] },
  { id: 'guardrails', title: 'Guardrails', needsProject: true, defs: [GUARDRAILS] },
  { id: 'mcp', title: 'MCP', needsProject: true, defs: [MCP_SERVERS, MCP_PROFILES] },
  { id: 'usage', title: 'Usage', needsProject: true, view: (s) => <UsagePage scope={s} /> },
  { id: 'records', title: 'Records', needsProject: true, view: (s) => <RecordsPage scope={s} /> },
  { id: 'audit', title: 'Audit log', adminOnly: true, view: (s) => <AuditPage session={s.session} /> },
];

/** `#/page/customer/project`: the page and the customer and project in view, so a reload or a link keeps them. */
const fromHash = (): { page: string; customerId?: string; projectId?: string } => {
  const [page, customerId, projectId] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { page: page || 'status', ...(customerId ? { customerId } : {}), ...(projectId ? { projectId } : {}) };
};
const hashOf = (page: string, customerId: string, projectId: string): string =>
  `#/${[page, customerId, projectId].filter(Boolean).map(encodeURIComponent).join('/')}`;

function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
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

function Console({ session, signOut }: { session: Session; signOut: () => void }) {
  const [page, setPage] = useState(fromHash().page);
  const [customers, setCustomers] = useState<string[]>(session.customerId ? [session.customerId] : []);
  const [customerId, setCustomerId] = useState(session.customerId ?? fromHash().customerId ?? '');
  const [projects, setProjects] = useState<string[]>([]);
  const [projectId, setProjectId] = useState(fromHash().projectId ?? session.projectId ?? 'default');
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const onHash = () => setPage(fromHash().page);
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    if (!session.admin) return;
    void session.client.callJson('ListCustomers', { pageSize: 1000 }).then(
      (a) => {
        const list = slugs(a.customers, 'customerId');
        setCustomers(list);
        setCustomerId((c) => (list.includes(c) ? c : (list[0] ?? '')));
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
        setProjectId((p) => (list.includes(p) ? p : (list[0] ?? '')));
      },
      () => setProjects([]),
    );
  }, [session, customerId, tick]);
  useEffect(() => {
    const hash = hashOf(page, customerId, projectId);
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }, [page, customerId, projectId]);
  const scope: Scope = useMemo(() => ({ session, customerId, projectId }), [session, customerId, projectId]);
  const visible = PAGES.filter((p) => session.admin || !p.adminOnly);
  const current = visible.find((p) => p.id === page) ?? visible[0];
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
              <a href={hashOf(p.id, customerId, projectId)} aria-current={current?.id === p.id ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {!current ? null : current.needsProject && !(customerId && projectId) ? (
          <p>Choose a customer and a project first.</p>
        ) : current.view ? (
          <div key={`${current.id}-${customerId}-${projectId}`}>{current.view(scope, changed)}</div>
        ) : (
          (current.defs ?? []).map((d) =>
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
  const [session, setSession] = useState<Session | undefined>(() => {
    const t = savedToken();
    return t ? sessionOf(t) : undefined;
  });
  if (!session) return <SignIn onSignedIn={setSession} />;
  return (
    <Console
      session={session}
      signOut={() => {
        forgetToken();
        location.hash = '';
        setSession(undefined);
      }}
    />
  );
}
