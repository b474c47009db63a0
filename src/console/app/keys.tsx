import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import { messageOfError } from './fields.ts';
import { mayCall, type Scope } from './resource.tsx';
import type { Session } from './session.ts';

/**
 * The API key the playground and the files and batches pages call the inference listener with: a
 * key created here in this sign-in (kept in this tab's memory only, never stored: the API shows a
 * key once), or one pasted. The console calls the inference listener through its own origin
 * (`/console/inference/…`, relayed by the management listener: console/inference-relay.ts).
 */

export interface HeldKey {
  label: string;
  key: string;
  projectId: string;
}

const held = new WeakMap<Session, HeldKey[]>();
const heldOf = (s: Session): HeldKey[] => {
  let list = held.get(s);
  if (!list) {
    list = [];
    held.set(s, list);
  }
  return list;
};

/** An inference call through the console's relay with `key`; the answer as it comes (streamed bodies too). */
export const callInference = (key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> =>
  fetch(`/console/inference${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** An inference error body's message (OpenAI's `{error: {message}}`), else the status. */
export const inferenceError = async (res: Response): Promise<string> => {
  const parsed: unknown = await res.json().catch(() => undefined);
  const error = parsed !== null && typeof parsed === 'object' ? Reflect.get(parsed, 'error') : undefined;
  const message = error !== null && typeof error === 'object' ? Reflect.get(error, 'message') : undefined;
  return typeof message === 'string' ? `${res.status}: ${message}` : `HTTP ${res.status}`;
};

/** Picks the key: one created in this sign-in for this project, or a pasted one. `onKey` gets the key ('' when none). */
export function KeyPicker({ scope, idPrefix, onKey }: { scope: Scope; idPrefix: string; onKey: (key: string) => void }) {
  const keys = heldOf(scope.session).filter((k) => k.projectId === scope.projectId);
  const [choice, setChoice] = useState(keys.length > 0 ? '0' : 'paste');
  const [pasted, setPasted] = useState('');
  const [error, setError] = useState('');
  const [, setTick] = useState(0);
  const pick = (c: string, p: string) => {
    setChoice(c);
    setPasted(p);
    onKey(c === 'paste' ? p.trim() : (keys[Number(c)]?.key ?? ''));
  };
  // The parent learns the key shown at first (one created earlier in this sign-in).
  useEffect(() => onKey(choice === 'paste' ? '' : (keys[Number(choice)]?.key ?? '')), []);
  const create = async () => {
    const name = `playground-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
    try {
      const answer = await scope.session.client.call('CreateApiKey', {
        name,
        enterpriseContext: { customerId: scope.customerId, projectId: scope.projectId },
      });
      const key = answer.apiKey;
      const list = heldOf(scope.session);
      list.push({ label: name, key, projectId: scope.projectId });
      setError('');
      setTick((t) => t + 1);
      // The list this render computed does not hold the new key yet: it is passed on as is.
      setChoice(String(list.filter((k) => k.projectId === scope.projectId).length - 1));
      setPasted('');
      onKey(key);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      setError(messageOfError(e.message));
    }
  };
  return (
    <fieldset class="key-picker">
      <legend>API key</legend>
      <div class="field">
        <label for={`${idPrefix}-key`}>Key to call with</label>
        <select id={`${idPrefix}-key`} value={choice} onChange={(e) => pick(e.currentTarget.value, pasted)}>
          {keys.map((k, i) => (
            <option key={k.label} value={String(i)}>
              {k.label} (created in this sign-in)
            </option>
          ))}
          <option value="paste">Paste a key</option>
        </select>
      </div>
      {choice === 'paste' ? (
        <div class="field">
          <label for={`${idPrefix}-pasted`}>Pasted API key</label>
          <input
            id={`${idPrefix}-pasted`}
            type="password"
            autoComplete="off"
            value={pasted}
            onInput={(e) => pick('paste', e.currentTarget.value)}
          />
        </div>
      ) : null}
      {mayCall(scope, 'project', 'CreateApiKey') ? (
        <button type="button" class="secondary" onClick={create}>
          Create a key for the playground
        </button>
      ) : null}
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
