import { type TObject, TypeGuard } from '@sinclair/typebox';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type Json, type JsonObject } from '../../api/client.ts';
import { OPS, type OpName } from '../../api/index.ts';
import { fieldsOf, messageOfError } from './fields.ts';
import { type Choice, type FormProps, SchemaForm } from './form.tsx';
import type { Session } from './session.ts';
import { StageLine } from './stage.tsx';

/**
 * A page of one resource, generated from its operation specs: a table from the list operation's
 * answer, a create form from the create operation's input schema, and a delete (or revoke) button
 * per row. What the page may do is what the token may do: a refused call shows the API's message.
 */

export interface Scope {
  session: Session;
  customerId: string;
  projectId: string;
}

export interface ResourceDef {
  title: string;
  /** What the list and create operations take from the page: the customer, or customer and project. */
  scope: 'global' | 'customer' | 'project';
  list: OpName;
  create?: OpName;
  createLabel?: string;
  columns?: string[];
  cells?: Record<string, (row: JsonObject) => preact.ComponentChildren>;
  remove?: { op: OpName; label: string; input: (row: JsonObject, s: Scope) => JsonObject };
  choices?: (s: Scope) => Promise<Record<string, Choice[]>>;
  /** Shown once after a create (e.g. an API key's plaintext). */
  created?: (answer: JsonObject) => preact.ComponentChildren;
  rowsExtra?: FormProps['rowsExtra'];
  /** The row's key in the table. */
  rowKey?: (row: JsonObject) => string;
}

const HIDDEN = new Set(['id', 'customerId', 'projectId', 'createdAt', 'updatedAt', 'deletedAt', 'labels', 'options']);

/** The array property of a list operation's answer (`customers`, `routes`, …) and its item schema. */
const itemsOf = (op: OpName): { key: string; item: TObject | undefined } => {
  for (const [key, s] of Object.entries(OPS[op].output.properties))
    if (TypeGuard.IsArray(s)) return { key, item: TypeGuard.IsObject(s.items) ? s.items : undefined };
  return { key: '', item: undefined };
};

const scopeInput = (def: ResourceDef, s: Scope): JsonObject =>
  def.scope === 'project' ? { customerId: s.customerId, projectId: s.projectId } : def.scope === 'customer' ? { customerId: s.customerId } : {};

export const text = (v: Json | undefined): string =>
  v === undefined || v === null ? '' : typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);

const isObj = (v: Json | undefined): v is JsonObject => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

export function ResourcePage({ def, scope, onChanged }: { def: ResourceDef; scope: Scope; onChanged?: () => void }) {
  const { key, item } = itemsOf(def.list);
  const columns = def.columns ?? Object.keys(item?.properties ?? {}).filter((c) => !HIDDEN.has(c)).slice(0, 6);
  const [rows, setRows] = useState<JsonObject[] | undefined>(undefined);
  const [error, setError] = useState('');
  const [choices, setChoices] = useState<Record<string, Choice[]>>({});
  const [shown, setShown] = useState<JsonObject | undefined>(undefined);
  const [saved, setSaved] = useState(0);
  const [formKey, setFormKey] = useState(0);
  const client = scope.session.client;

  const load = async () => {
    try {
      const page = await client.callJson(def.list, scopeInput(def, scope));
      const items = page[key];
      setRows(Array.isArray(items) ? items.filter(isObj) : []);
      setError('');
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      setRows([]);
      setError(messageOfError(e.message));
    }
  };
  useEffect(() => {
    setRows(undefined);
    setShown(undefined);
    void load();
    if (def.choices) void def.choices(scope).then(setChoices, () => setChoices({}));
  }, [def, scope.customerId, scope.projectId, scope.session]);

  const fixed: Record<string, string> = def.scope === 'project' ? { customerId: scope.customerId, projectId: scope.projectId } : def.scope === 'customer' ? { customerId: scope.customerId } : {};
  const headingId = `h-${def.list}`;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{def.title}</h2>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {saved > 0 ? <StageLine session={scope.session} since={saved} /> : null}
      {rows === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="empty">None yet.</p>
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={`${def.title} table`}>
          <table>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th scope="col" key={c}>
                    {c}
                  </th>
                ))}
                {def.remove ? <th scope="col">actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {rows.map((row, i) => (
                <tr key={def.rowKey?.(row) ?? text(row.id) ?? String(i)}>
                  {columns.map((c) => (
                    <td key={c}>{def.cells?.[c]?.(row) ?? text(row[c])}</td>
                  ))}
                  {def.remove ? (
                    <td>
                      <RemoveButton def={def} row={row} scope={scope} done={() => (setSaved(Date.now()), void load(), onChanged?.())} onError={setError} />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {shown && def.created ? def.created(shown) : null}
      {def.create ? (
        <details class="create">
          <summary>{def.createLabel ?? `Create`}</summary>
          <SchemaForm
            key={formKey}
            id={`form-${def.create}`}
            fields={fieldsOf(OPS[def.create].input)}
            fixed={fixed}
            choices={choices}
            submitLabel={def.createLabel ?? 'Create'}
            {...(def.rowsExtra ? { rowsExtra: def.rowsExtra } : {})}
            onSubmit={async (body) => {
              const create = def.create;
              if (!create) return;
              const answer = await client.callJson(create, body);
              setShown(answer);
              setSaved(Date.now());
              setFormKey((k) => k + 1);
              await load();
              onChanged?.();
            }}
          />
        </details>
      ) : null}
    </section>
  );
}

function RemoveButton({ def, row, scope, done, onError }: { def: ResourceDef; row: JsonObject; scope: Scope; done: () => void; onError: (m: string) => void }) {
  const remove = def.remove;
  if (!remove) return null;
  const name = text(row[def.columns?.[0] ?? 'name'] ?? row.id);
  return (
    <button
      type="button"
      class="danger"
      aria-label={`${remove.label} ${name}`}
      onClick={async () => {
        if (!confirm(`${remove.label} ${name}?`)) return;
        try {
          await scope.session.client.callJson(remove.op, remove.input(row, scope));
          done();
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          onError(messageOfError(e.message));
        }
      }}
    >
      {remove.label}
    </button>
  );
}
