import { RE2JS } from 're2js';
import { type ConfigSnapshot, type ProjectSnapshot, projectKey } from '../../src/propagation/snapshot.ts';

/**
 * A ConfigSnapshot as stable plain JSON, for the golden fixtures of test/fixtures/propagation/:
 * maps become objects with sorted keys, sets sorted arrays, a compiled guardrail pattern its RE2
 * pattern and flags, an adapter its id, a `…Json` string the value it holds, and `undefined` null
 * (so an unset setting shows). A key's project is named (`project: "customer/project"`) when it is
 * the very object the snapshot lists under that name, and written out in full otherwise.
 */

type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

const sorted = (entries: Iterable<[string, Plain]>): { [k: string]: Plain } =>
  Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export const plain = (v: unknown, path = '$'): Plain => {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`${path}: ${v} has no JSON form`);
    return v;
  }
  if (typeof v === 'function') throw new Error(`${path}: a function in the snapshot`);
  if (v instanceof RE2JS) return { re2: v.pattern(), flags: v.flags() };
  if (v instanceof Map) return sorted([...v].map(([k, x]): [string, Plain] => [String(k), plain(x, `${path}.${String(k)}`)]));
  if (v instanceof Set)
    return [...v].map((x, i) => plain(x, `${path}[${i}]`)).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (Array.isArray(v)) return v.map((x, i) => plain(x, `${path}[${i}]`));
  if (!isRecord(v)) throw new Error(`${path}: a ${typeof v} in the snapshot`);
  // A provider adapter: functions and an id; the snapshot holds the registry's own object.
  if (Object.values(v).some((x) => typeof x === 'function')) {
    if (typeof v['id'] !== 'string') throw new Error(`${path}: an object with functions and no id`);
    return `adapter:${v['id']}`;
  }
  return sorted(
    Object.entries(v).map(([k, x]): [string, Plain] =>
      k.endsWith('Json') && typeof x === 'string' ? [k, JSON.parse(x) as Plain] : [k, plain(x, `${path}.${k}`)],
    ),
  );
};

const projectRef = (snap: ConfigSnapshot, p: ProjectSnapshot, path: string): Plain => {
  const name = projectKey(p.customerId, p.projectId);
  return snap.projects.get(name) === p ? name : plain(p, path);
};

export const snapshotView = (snap: ConfigSnapshot): Plain => {
  const { keys, ...rest } = snap;
  const view = plain(rest) as { [k: string]: Plain };
  view['keys'] = sorted(
    [...keys].map(([hash, k]): [string, Plain] => {
      const { project, ...key } = k;
      return [
        hash,
        { ...(plain(key, `$.keys.${hash}`) as { [k: string]: Plain }), project: projectRef(snap, project, `$.keys.${hash}.project`) },
      ];
    }),
  );
  return sorted(Object.entries(view));
};
