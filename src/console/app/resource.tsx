import { type TObject, TypeGuard } from '@sinclair/typebox';
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { ApiError, type Json, type JsonObject } from '../../api/client.ts';
import { OPS, type OpName } from '../../api/index.ts';
import { fieldsOf, messageOfError, valuesOf } from './fields.ts';
import { type Choice, type FormProps, SchemaForm } from './form.tsx';
import { type Session, saveChange } from './session.ts';
import { StageLine } from './stage.tsx';
import { Table } from './table.tsx';

/**
 * A page of one resource, generated from its operation specs: a table from the list operation's
 * answer, a create form from the create operation's input schema, an edit form from the update
 * operation's (filled with the row), and a delete (or revoke) button per row. Every write is logged
 * as a change whose stage is shown under the table. What the page may do is what the token may do:
 * a refused call shows the API's message.
 */

export interface Scope {
  session: Session;
  customerId: string;
  projectId: string;
  /** A user token's roles by project (`admin`, `member`); absent for the platform admin (who may do everything). */
  roles?: ReadonlyMap<string, string>;
}

/**
 * Whether the token in `s` may call `op` on this page's resource, as the management API decides it
 * (control-plane/auth.ts): pages show no Create, Edit or Delete the API would refuse. A customer-wide
 * write that needs a project role is checked against `default`, as the API does.
 */
export const mayCall = (s: Scope, scope: ResourceDef['scope'], op: OpName): boolean => {
  if (!s.roles) return true;
  const permission = OPS[op].permission;
  if (permission === 'platform_admin') return false;
  if (permission !== 'project_admin') return true;
  return s.roles.get(scope === 'project' ? s.projectId : 'default') === 'admin';
};

export interface ResourceDef {
  title: string;
  /** What the list and create operations take from the page: the customer, or customer and project. */
  scope: 'global' | 'customer' | 'project';
  list: OpName;
  /** Extra input of the list operation. */
  listInput?: JsonObject;
  create?: OpName;
  createLabel?: string;
  columns?: string[];
  cells?: Record<string, (row: JsonObject, s: Scope) => preact.ComponentChildren>;
  remove?: { op: OpName; label: string; input: (row: JsonObject, s: Scope) => JsonObject; when?: (row: JsonObject) => boolean };
  /** A row's own action besides edit and delete (not destructive: no confirmation), e.g. approving an MCP profile's pending tools. */
  act?: { op: OpName; label: string; input: (row: JsonObject, s: Scope) => JsonObject; when: (row: JsonObject) => boolean };
  /** The update operation; `fixed` names the row (its fields are not shown); `hide` leaves fields out of the form. */
  update?: { op: OpName; fixed: (row: JsonObject, s: Scope) => Record<string, string>; hide?: string[] };
  choices?: (s: Scope) => Promise<Record<string, Choice[]>>;
  /** Shown once after a create (e.g. an API key's plaintext). */
  created?: (answer: JsonObject) => preact.ComponentChildren;
  rowsExtra?: FormProps['rowsExtra'];
  /** The row's key in the table. */
  rowKey?: (row: JsonObject) => string;
  /** The row's name in its buttons' names ("Edit <name>"); default: its first column. */
  rowName?: (row: JsonObject) => string;
}

const HIDDEN = new Set(['id', 'customerId', 'projectId', 'createdAt', 'updatedAt', 'deletedAt', 'labels', 'options']);

/** The array property of a list operation's answer (`customers`, `routes`, …) and its item schema. */
const itemsOf = (op: OpName): { key: string; item: TObject | undefined } => {
  for (const [key, s] of Object.entries(OPS[op].output.properties))
    if (TypeGuard.IsArray(s)) return { key, item: TypeGuard.IsObject(s.items) ? s.items : undefined };
  return { key: '', item: undefined };
};

const scopeInput = (def: ResourceDef, s: Scope): Record<string, string> =>
  def.scope === 'project'
    ? { customerId: s.customerId, projectId: s.projectId }
    : def.scope === 'customer'
      ? { customerId: s.customerId }
      : {};

export const text = (v: Json | undefined): string =>
  v === undefined || v === null
    ? ''
    : typeof v === 'string'
      ? v
      : typeof v === 'number' || typeof v === 'boolean'
        ? String(v)
        : JSON.stringify(v);

const isObj = (v: Json | undefined): v is JsonObject => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

const nameOf = (def: ResourceDef, row: JsonObject): string => def.rowName?.(row) ?? text(row[def.columns?.[0] ?? 'name'] ?? row.id);

/**
 * What a create names in its change line ("Saved: AddProjectModel gpt-mini."): the first column's
 * field, else `name`, else the first text the form filled in besides the customer and project (a
 * value picked from a list by its label).
 */
const createdName = (def: ResourceDef, body: JsonObject, choices: Record<string, Choice[]>): string => {
  for (const k of [def.columns?.[0], 'name']) {
    const v = k === undefined ? '' : text(body[k]).trim();
    if (v) return v;
  }
  for (const [k, v] of Object.entries(body))
    if (k !== 'customerId' && k !== 'projectId' && typeof v === 'string' && v.trim())
      return choices[k]?.find((c) => c.value === v)?.label ?? v.trim();
  return '';
};

/**
 * The change last saved on each page, per sign-in: a page remounted while its change is on its way
 * (the project list refreshed after a save, say) shows that change's stage line again.
 */
const lastChange = new WeakMap<Session, Map<string, number>>();
const lastChangeOf = (session: Session): Map<string, number> => {
  let m = lastChange.get(session);
  if (!m) {
    m = new Map();
    lastChange.set(session, m);
  }
  return m;
};

export function ResourcePage({ def, scope, onChanged }: { def: ResourceDef; scope: Scope; onChanged?: () => void }) {
  const { key, item } = itemsOf(def.list);
  const columns =
    def.columns ??
    Object.keys(item?.properties ?? {})
      .filter((c) => !HIDDEN.has(c))
      .slice(0, 6);
  const [rows, setRows] = useState<JsonObject[] | undefined>(undefined);
  const [error, setError] = useState('');
  const [choices, setChoices] = useState<Record<string, Choice[]>>({});
  const [shown, setShown] = useState<JsonObject | undefined>(undefined);
  const [changeId, setChangeId] = useState(
    () => lastChangeOf(scope.session).get(`${def.list}/${scope.customerId}/${scope.projectId}`) ?? 0,
  );
  const [formKey, setFormKey] = useState(0);
  const [editing, setEditing] = useState<JsonObject | undefined>(undefined);
  const session = scope.session;

  const load = async () => {
    try {
      const page = await session.client.callJson(def.list, { ...scopeInput(def, scope), ...(def.listInput ?? {}) });
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
    setEditing(undefined);
    void load();
    if (def.choices) void def.choices(scope).then(setChoices, () => setChoices({}));
  }, [def, scope.customerId, scope.projectId, session]);

  /** A write through the typed client, logged as a change; the table is read again at once. */
  const write = async (op: OpName, body: JsonObject, what: string): Promise<JsonObject> => {
    const name = what.trim();
    const { answer, change } = await saveChange(session, name ? `${op} ${name}` : op, () => session.client.callJson(op, body));
    lastChangeOf(session).set(`${def.list}/${scope.customerId}/${scope.projectId}`, change.id);
    setChangeId(change.id);
    await load();
    onChanged?.();
    return answer;
  };

  const headingId = `h-${def.list}`;
  const canCreate = def.create !== undefined && mayCall(scope, def.scope, def.create);
  const canUpdate = def.update !== undefined && mayCall(scope, def.scope, def.update.op);
  const canRemove = def.remove !== undefined && mayCall(scope, def.scope, def.remove.op);
  const canAct = def.act !== undefined && mayCall(scope, def.scope, def.act.op);
  const actions = canRemove || canUpdate || canAct;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{def.title}</h2>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {changeId > 0 ? <StageLine key={changeId} session={session} changeId={changeId} /> : null}
      {rows === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="empty">None yet.</p>
      ) : (
        <Table
          label={def.title}
          columns={[...columns, ...(actions ? ['actions'] : [])]}
          rows={rows.map((row, i) => ({
            key: def.rowKey?.(row) ?? (text(row.id) || String(i)),
            cells: [
              ...columns.map((c) => def.cells?.[c]?.(row, scope) ?? text(row[c])),
              ...(actions
                ? [
                    <span class="actions">
                      {canUpdate ? (
                        <button type="button" class="secondary" aria-label={`Edit ${nameOf(def, row)}`} onClick={() => setEditing(row)}>
                          Edit
                        </button>
                      ) : null}
                      {canAct && def.act?.when(row) ? (
                        <ActButton
                          act={def.act}
                          name={nameOf(def, row)}
                          input={def.act.input(row, scope)}
                          write={write}
                          onError={setError}
                        />
                      ) : null}
                      {canRemove && def.remove && (def.remove.when?.(row) ?? true) ? (
                        <RemoveButton def={def} row={row} scope={scope} write={write} onError={setError} />
                      ) : null}
                    </span>,
                  ]
                : []),
            ],
          }))}
        />
      )}
      {shown && def.created ? def.created(shown) : null}
      {editing && def.update && canUpdate ? (
        <EditForm
          def={def}
          update={def.update}
          row={editing}
          scope={scope}
          choices={choices}
          write={write}
          close={() => setEditing(undefined)}
        />
      ) : null}
      {def.create && canCreate ? (
        <details class="create">
          <summary>{def.createLabel ?? `Create`}</summary>
          <SchemaForm
            key={formKey}
            id={`form-${def.create}`}
            fields={fieldsOf(OPS[def.create].input)}
            fixed={scopeInput(def, scope)}
            choices={choices}
            submitLabel={def.createLabel ?? 'Create'}
            {...(def.rowsExtra ? { rowsExtra: def.rowsExtra } : {})}
            onSubmit={async (body) => {
              const create = def.create;
              if (!create) return;
              const answer = await write(create, body, createdName(def, body, choices));
              setShown(answer);
              setFormKey((k) => k + 1);
            }}
          />
        </details>
      ) : null}
    </section>
  );
}

type Write = (op: OpName, body: JsonObject, what: string) => Promise<JsonObject>;

type Update = NonNullable<ResourceDef['update']>;

function EditForm({
  def,
  update,
  row,
  scope,
  choices,
  write,
  close,
}: {
  def: ResourceDef;
  update: Update;
  row: JsonObject;
  scope: Scope;
  choices: Record<string, Choice[]>;
  write: Write;
  close: () => void;
}) {
  const name = nameOf(def, row);
  const hide = new Set(update.hide ?? []);
  const fields = fieldsOf(OPS[update.op].input).filter((f) => !hide.has(f.name));
  const { values, rows } = valuesOf(fields, row);
  const id = `edit-${update.op}`;
  // Focus moves into the form as it appears (a layout effect: before any key press can land elsewhere).
  useLayoutEffect(() => {
    document.getElementById(id)?.querySelector<HTMLElement>('input:not([type=hidden]), select, textarea')?.focus();
  }, []);
  return (
    <section class="edit" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>Edit {name}</h3>
      <SchemaForm
        key={text(row.id) || name}
        id={id}
        fields={fields}
        fixed={update.fixed(row, scope)}
        choices={choices}
        initial={values}
        initialRows={rows}
        submitLabel="Save changes"
        {...(def.rowsExtra ? { rowsExtra: def.rowsExtra } : {})}
        onSubmit={async (body) => {
          await write(update.op, body, name);
          close();
        }}
      />
      <button type="button" class="secondary" onClick={close}>
        Cancel
      </button>
    </section>
  );
}

function RemoveButton({
  def,
  row,
  scope,
  write,
  onError,
}: {
  def: ResourceDef;
  row: JsonObject;
  scope: Scope;
  write: Write;
  onError: (m: string) => void;
}) {
  const remove = def.remove;
  if (!remove) return null;
  const name = nameOf(def, row);
  return (
    <button
      type="button"
      class="danger"
      aria-label={`${remove.label} ${name}`}
      onClick={async () => {
        if (!confirm(`${remove.label} ${name}?`)) return;
        try {
          await write(remove.op, remove.input(row, scope), name);
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

/** A row's own action (ResourceDef.act): runs it and shows its change line like any write. */
function ActButton({
  act,
  name,
  input,
  write,
  onError,
}: {
  act: NonNullable<ResourceDef['act']>;
  name: string;
  input: JsonObject;
  write: Write;
  onError: (m: string) => void;
}) {
  return (
    <button
      type="button"
      class="secondary"
      aria-label={`${act.label} ${name}`}
      onClick={async () => {
        try {
          await write(act.op, input, name);
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          onError(messageOfError(e.message));
        }
      }}
    >
      {act.label}
    </button>
  );
}
