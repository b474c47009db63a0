import { type TObject, Type as t } from '@sinclair/typebox';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type Json, type JsonObject } from '../../api/client.ts';
import { fieldsOf, messageOfError, valuesOf } from './fields.ts';
import { type Choice, SchemaForm } from './form.tsx';
import { mayCall, type Scope } from './resource.tsx';
import { saveChange } from './session.ts';
import { StageLine } from './stage.tsx';

/**
 * A project's settings (UpsertProjectSetting's `settingValue` is JSON text in the format of each
 * setting, contract §3.2 and the op's notes): one form per setting, its fields those of the format,
 * filled with the value in force. The API checks the value; its message is shown with the form.
 */

interface SettingDef {
  name: 'rate-limit' | 'record-retention' | 'trace-content' | 'global-fallback' | 'response-cache' | 'mid-stream-fallback';
  title: string;
  help: string;
  schema: TObject;
  /** The form's body as the setting's value, and back. */
  toValue: (body: JsonObject) => Json;
  fromValue: (value: Json) => JsonObject;
}

const asObject = (v: Json): JsonObject => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {});

const SETTINGS: SettingDef[] = [
  {
    name: 'rate-limit',
    title: 'Rate limit',
    help: 'Requests and tokens per minute, counted per API key or for the whole project. Over the limit: 429 rate_limit_exceeded.',
    schema: t.Object({
      requestsPerMinute: t.Optional(t.Integer({ minimum: 1 })),
      tokensPerMinute: t.Optional(t.Integer({ minimum: 1 })),
      per: t.Optional(t.Union([t.Literal('api_key'), t.Literal('project')])),
    }),
    toValue: (b) => b,
    fromValue: asObject,
  },
  {
    name: 'record-retention',
    title: 'Record retention',
    help: 'Which request and response bodies the records keep, and for how many days records are kept (empty: forever).',
    schema: t.Object({
      bodies: t.Union([t.Literal('full'), t.Literal('truncated'), t.Literal('none')]),
      maxBodyBytes: t.Optional(t.Integer({ minimum: 1, description: "'truncated': bytes kept of each body (default 4096)" })),
      days: t.Optional(t.Integer({ minimum: 1 })),
    }),
    toValue: (b) => b,
    fromValue: asObject,
  },
  {
    name: 'trace-content',
    title: 'Trace content',
    help: "Whether prompt and completion text go on the project's trace spans (default: no).",
    schema: t.Object({ traceContent: t.Boolean() }),
    toValue: (b) => b.traceContent === true,
    fromValue: (v) => ({ traceContent: v === true }),
  },
  {
    name: 'global-fallback',
    title: 'Global fallback',
    help: 'Tried in order after every target of a route has failed retryably.',
    schema: t.Object({
      targets: t.Array(t.Object({ connection: t.String({ minLength: 1 }), model: t.String({ minLength: 1 }) }), {
        minItems: 1,
        maxItems: 32,
      }),
    }),
    toValue: (b) => b,
    fromValue: asObject,
  },
  {
    name: 'mid-stream-fallback',
    title: 'Mid-stream fallback',
    help: "Whether a stream that breaks after part of the answer was sent is continued by the route's next target, given the text so far (default: no).",
    schema: t.Object({ midStreamFallback: t.Boolean() }),
    toValue: (b) => b.midStreamFallback === true,
    fromValue: (v) => ({ midStreamFallback: v === true }),
  },
  {
    name: 'response-cache',
    title: 'Response cache',
    help: 'Identical requests answered from the cache for the TTL (header X-Gateway-Cache: hit), per project or per API key. Absent: off.',
    schema: t.Object({
      mode: t.Union([t.Literal('exact')]),
      ttlSeconds: t.Integer({ minimum: 1, maximum: 604_800, description: 'seconds an answer is served from the cache (1-604800)' }),
      scope: t.Optional(t.Union([t.Literal('project'), t.Literal('api_key')])),
    }),
    toValue: (b) => b,
    fromValue: asObject,
  },
];

type Current = Record<string, { value: Json; updatedAt: string }>;

const parse = (text: string): Json => {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
};

export function SettingsPage({ scope }: { scope: Scope }) {
  const session = scope.session;
  const [current, setCurrent] = useState<Current | undefined>(undefined);
  const [error, setError] = useState('');
  const [changeId, setChangeId] = useState(0);
  const [version, setVersion] = useState(0);
  const [connections, setConnections] = useState<Choice[]>([]);
  const at = { customerId: scope.customerId, projectId: scope.projectId };
  const load = async () => {
    try {
      const answer = await session.client.call('GetProjectSettings', at);
      setCurrent(Object.fromEntries(answer.settings.map((s) => [s.settingName, { value: parse(s.settingValue), updatedAt: s.updatedAt }])));
      setError('');
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      setCurrent({});
      setError(messageOfError(e.message));
    }
    setVersion((v) => v + 1);
  };
  useEffect(() => {
    setCurrent(undefined);
    void load();
    void session.client.call('ListProviderConnections', at).then(
      (a) => setConnections(a.connections.map((c) => ({ value: c.name, label: `${c.name} (${c.provider})` }))),
      () => setConnections([]),
    );
  }, [session, scope.customerId, scope.projectId]);

  // A member without the admin role reads the settings; the forms are for those who may change them.
  const canWrite = mayCall(scope, 'project', 'UpsertProjectSetting');
  const save = async (what: string, write: () => Promise<unknown>) => {
    const { change } = await saveChange(session, what, write);
    setChangeId(change.id);
    await load();
  };

  return (
    <section aria-labelledby="h-settings">
      <h2 id="h-settings">Project settings</h2>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {changeId > 0 ? <StageLine key={changeId} session={session} changeId={changeId} /> : null}
      {current === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        SETTINGS.map((d) => {
          const now = current[d.name];
          const fields = fieldsOf(d.schema);
          const { values, rows } = now ? valuesOf(fields, d.fromValue(now.value)) : { values: {}, rows: {} };
          return (
            <section key={d.name} class="setting" aria-labelledby={`h-setting-${d.name}`}>
              <h3 id={`h-setting-${d.name}`}>{d.title}</h3>
              <p class="help">
                {d.help}{' '}
                <span class="muted">
                  {now ? `Set (${d.name}, updated ${now.updatedAt}).` : `Not set (${d.name}): the default applies.`}
                </span>
              </p>
              {!canWrite ? (
                now ? (
                  <pre class="setting-value">{JSON.stringify(now.value, null, 2)}</pre>
                ) : null
              ) : (
                <SchemaForm
                  key={`${d.name}-${version}`}
                  id={`form-setting-${d.name}`}
                  fields={fields}
                  choices={{ connection: connections }}
                  initial={values}
                  initialRows={rows}
                  submitLabel={`Save ${d.title.toLowerCase()}`}
                  onSubmit={(body) =>
                    save(`UpsertProjectSetting ${d.name}`, () =>
                      session.client.call('UpsertProjectSetting', {
                        ...at,
                        settingName: d.name,
                        settingValue: JSON.stringify(d.toValue(body)),
                      }),
                    )
                  }
                />
              )}
              {now && canWrite ? (
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    void save(`DeleteProjectSetting ${d.name}`, () =>
                      session.client.call('DeleteProjectSetting', { ...at, settingName: d.name }),
                    ).catch((e: unknown) => {
                      if (!(e instanceof ApiError)) throw e;
                      setError(messageOfError(e.message));
                    })
                  }
                >
                  Reset {d.title.toLowerCase()} to the default
                </button>
              ) : null}
            </section>
          );
        })
      )}
    </section>
  );
}
