import { useState } from 'preact/hooks';
import { ApiError, type JsonObject } from '../../api/client.ts';
import { bodyOf, type Field, fieldOfError, messageOfError, type Values } from './fields.ts';

/**
 * A form generated from an operation's input fields. Fields named in `fixed` (the selected customer
 * and project) are not shown: their values come from the page. An error from the API that names a
 * field is shown next to that field (and the field marked invalid); any other error above the button.
 */

export interface Choice {
  value: string;
  label: string;
}

export interface FormProps {
  id: string;
  fields: Field[];
  fixed?: Record<string, string>;
  /** A select for these fields (by name) instead of a text input. */
  choices?: Record<string, Choice[]>;
  initial?: Values;
  initialRows?: Record<string, number>;
  submitLabel: string;
  onSubmit: (body: JsonObject) => Promise<void>;
  /** Extra content per `rows` field (e.g. the route's weight bars). */
  rowsExtra?: (field: Field, values: Values, rows: number) => preact.ComponentChildren;
}

const inputId = (form: string, path: string) => `${form}-${path.replace(/\./g, '-')}`;

export function SchemaForm(p: FormProps) {
  const [values, setValues] = useState<Values>(() => ({ ...(p.initial ?? {}), ...Object.fromEntries(Object.entries(p.fixed ?? {})) }));
  const [rows, setRows] = useState<Record<string, number>>(() => ({
    ...Object.fromEntries(rowDefaults(p.fields)),
    ...(p.initialRows ?? {}),
  }));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState(false);
  const fixed = p.fixed ?? {};
  const set = (path: string, v: string) => setValues((old) => ({ ...old, [path]: v }));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    setFormError('');
    const filled: Values = { ...values };
    fillFixed(p.fields, fixed, filled);
    try {
      await p.onSubmit(bodyOf(p.fields, filled, rows));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const message = messageOfError(err.message);
      const field = fieldOfError(err.message);
      if (field && document.getElementById(inputId(p.id, field))) {
        setErrors({ [field]: message });
        document.getElementById(inputId(p.id, field))?.focus();
      } else setFormError(message);
    } finally {
      setBusy(false);
    }
  };

  /** Fixed fields are hidden at the top and in groups, not inside a row (a target's `model` is its own). */
  const render = (f: Field, inRow = false): preact.ComponentChildren => {
    if (!inRow && f.name in fixed) return null;
    const id = inputId(p.id, f.path);
    const err = errors[f.path];
    const described = [f.description ? `${id}-help` : '', err ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
    const help = f.description ? (
      <small id={`${id}-help`} class="help">
        {f.description}
      </small>
    ) : null;
    const errorText = err ? (
      <span id={`${id}-error`} class="field-error" role="alert">
        {err}
      </span>
    ) : null;
    const common = { id, name: f.path, 'aria-invalid': err ? true : undefined, 'aria-describedby': described };
    const value = values[f.path] ?? '';
    if (f.kind === 'group')
      return (
        <fieldset key={f.path}>
          <legend title={f.name}>{f.label}</legend>
          {(f.fields ?? []).map((c) => render(c, inRow))}
        </fieldset>
      );
    if (f.kind === 'rows') {
      const n = rows[f.path] ?? 0;
      return (
        <fieldset key={f.path} class="rows" id={id} tabIndex={-1} aria-describedby={described}>
          <legend title={f.name}>{f.label}</legend>
          {help}
          {errorText}
          {Array.from({ length: n }, (_, i) => (
            // biome-ignore lint/a11y/useSemanticElements: a row inside the list's own fieldset; a nested fieldset's box would break the row grid.
            <div class="row" key={i} role="group" aria-label={`${f.label} ${i + 1}`}>
              {(f.fields ?? []).map((c) => render({ ...c, path: `${f.path}.${i}.${c.name}`, label: `${c.label}` }, true))}
              <button
                type="button"
                class="secondary"
                aria-label={`Remove ${f.label.toLowerCase()} ${i + 1}`}
                disabled={n <= (f.minItems ?? 0)}
                onClick={() => removeRow(f, i)}
              >
                Remove
              </button>
            </div>
          ))}
          {p.rowsExtra?.(f, values, n)}
          <button
            type="button"
            class="secondary"
            disabled={f.maxItems !== undefined && n >= f.maxItems}
            onClick={() => setRows((r) => ({ ...r, [f.path]: n + 1 }))}
          >
            Add {f.label.toLowerCase().replace(/s$/, '')}
          </button>
        </fieldset>
      );
    }
    let control: preact.ComponentChildren;
    const choices = p.choices?.[f.name];
    if (f.kind === 'boolean')
      control = (
        <select {...common} value={value} onChange={(e) => set(f.path, e.currentTarget.value)}>
          <option value="">(default)</option>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      );
    else if (choices || f.kind === 'choice')
      control = (
        <select {...common} required={f.required} value={value} onChange={(e) => set(f.path, e.currentTarget.value)}>
          <option value="">{f.required ? '(choose)' : '(none)'}</option>
          {(choices ?? (f.choices ?? []).map((c) => ({ value: c, label: c }))).map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      );
    else if (f.kind === 'json' || f.kind === 'list')
      control = (
        <textarea
          {...common}
          rows={f.kind === 'json' ? 3 : 2}
          required={f.required}
          value={value}
          onInput={(e) => set(f.path, e.currentTarget.value)}
        />
      );
    else if (f.kind === 'number')
      control = (
        <input
          {...common}
          type="number"
          step="1"
          min={f.minimum}
          max={f.maximum}
          required={f.required}
          value={value}
          onInput={(e) => set(f.path, e.currentTarget.value)}
        />
      );
    else
      control = (
        <input
          {...common}
          type={f.kind === 'secret' ? 'password' : 'text'}
          autoComplete={f.kind === 'secret' ? 'new-password' : 'off'}
          minLength={f.minLength}
          maxLength={f.maxLength}
          pattern={f.pattern}
          required={f.required}
          value={value}
          onInput={(e) => set(f.path, e.currentTarget.value)}
        />
      );
    return (
      <div class={`field${err ? ' invalid' : ''}`} key={f.path}>
        <span class="label-row">
          <label for={id} title={f.name}>
            {f.label}
          </label>
          {f.required ? (
            <span class="req" aria-hidden="true">
              *
            </span>
          ) : null}
        </span>
        {control}
        {help}
        {errorText}
      </div>
    );
  };

  const removeRow = (f: Field, i: number) => {
    const n = rows[f.path] ?? 0;
    setValues((old) => {
      const next: Values = {};
      for (const [k, v] of Object.entries(old)) {
        const m = k.startsWith(`${f.path}.`) ? /^(\d+)\.(.*)$/.exec(k.slice(f.path.length + 1)) : null;
        if (!m) next[k] = v;
        else if (Number(m[1]) < i) next[k] = v;
        else if (Number(m[1]) > i) next[`${f.path}.${Number(m[1]) - 1}.${m[2]}`] = v;
      }
      return next;
    });
    setRows((r) => ({ ...r, [f.path]: n - 1 }));
  };

  return (
    <form id={p.id} class="schema-form" onSubmit={submit} noValidate={false}>
      {p.fields.map((f) => render(f))}
      {formError ? (
        <p class="form-error" role="alert">
          {formError}
        </p>
      ) : null}
      <button type="submit" disabled={busy}>
        {p.submitLabel}
      </button>
    </form>
  );
}

/**
 * Rows a form starts with: a required list one (or its minimum), an optional one none — absent and
 * empty differ for some fields (an MCP profile's `grants`: absent lets every caller in, present denies
 * by default), and an optional list left with no row is left out of the request.
 */
const rowDefaults = (fields: Field[]): [string, number][] =>
  fields.flatMap((f) =>
    f.kind === 'rows'
      ? [[f.path, f.required ? Math.max(1, f.minItems ?? 0) : (f.minItems ?? 0)] as [string, number]]
      : f.kind === 'group'
        ? rowDefaults(f.fields ?? [])
        : [],
  );

/** Fixed values (by field name) at any depth: `customerId` fills `enterpriseContext.customerId` too. */
const fillFixed = (fields: Field[], fixed: Record<string, string>, into: Values): void => {
  for (const f of fields) {
    if (f.kind === 'group') fillFixed(f.fields ?? [], fixed, into);
    else if (f.name in fixed) into[f.path] = fixed[f.name] ?? '';
  }
};
