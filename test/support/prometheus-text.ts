/**
 * A strict reader of the Prometheus text exposition format 0.0.4 (what `GET /metrics` serves), for
 * tests: every line is a `# HELP`, a `# TYPE` or a sample of the family its `# TYPE` opened; metric
 * and label names are valid, label values use only the format's escapes (`\\`, `\"`, `\n`), no
 * label repeats in a sample, no series repeats, values are Go floats (`+Inf`, `-Inf`, `NaN`), a
 * histogram's buckets are cumulative and end in `le="+Inf"` equal to its `_count`. Any breach
 * throws naming the line. `promtoolCheck` runs `promtool check metrics` when promtool is installed.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/;
const TYPES: readonly Family['type'][] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];
const isType = (t: string): t is Family['type'] => TYPES.some((x) => x === t);

const parseFloatStrict = (s: string, line: string): number => {
  if (!FLOAT.test(s)) throw new Error(`not a float value '${s}': ${line}`);
  if (s.endsWith('Inf')) return s.startsWith('-') ? -Infinity : Infinity;
  return s === 'NaN' ? Number.NaN : Number(s);
};

/** `{a="x",b="y"}` starting at `i`: the labels and the index after `}`. */
const readLabels = (l: string, start: number): { labels: Record<string, string>; end: number } => {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    if (l[i] === '}') return { labels, end: i + 1 };
    const eq = l.indexOf('=', i);
    if (eq < 0) throw new Error(`a label without '=': ${l}`);
    const name = l.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`invalid label name '${name}': ${l}`);
    if (name in labels) throw new Error(`label '${name}' repeated: ${l}`);
    if (l[eq + 1] !== '"') throw new Error(`label value not quoted: ${l}`);
    let value = '';
    let j = eq + 2;
    for (;;) {
      const c = l[j];
      if (c === undefined) throw new Error(`unterminated label value: ${l}`);
      if (c === '"') break;
      if (c === '\\') {
        const next = l[j + 1];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else throw new Error(`invalid escape '\\${next ?? ''}' in a label value: ${l}`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (l[i] === ',') i++;
    else if (l[i] !== '}') throw new Error(`expected ',' or '}' after label '${name}': ${l}`);
  }
};

const familyOf = (sample: string, f: Family | undefined): boolean => {
  if (!f) return false;
  if (f.type === 'histogram') return [`${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`].includes(sample);
  if (f.type === 'summary') return [f.name, `${f.name}_sum`, `${f.name}_count`].includes(sample);
  return sample === f.name;
};

const checkHistogram = (f: Family): void => {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const h = series.get(key) ?? { buckets: [] };
    series.set(key, h);
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${s.name} without 'le'`);
      h.buckets.push([parseFloatStrict(le, s.name), s.value]);
    } else if (s.name.endsWith('_count')) h.count = s.value;
  }
  for (const [key, h] of series) {
    for (let i = 1; i < h.buckets.length; i++) {
      const [prevLe, prev] = h.buckets[i - 1] ?? [0, 0];
      const [le, v] = h.buckets[i] ?? [0, 0];
      if (!(le > prevLe) || v < prev) throw new Error(`${f.name}${key}: buckets not ascending and cumulative`);
    }
    const last = h.buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: no le="+Inf" bucket`);
    if (h.count !== last[1]) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} ≠ _count ${h.count}`);
  }
};

/** Parses `text` strictly (see above); throws at the first breach. */
export const parseExposition = (text: string): Family[] => {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  let current: Family | undefined;
  const helps = new Map<string, string>();
  for (const l of text.split('\n').slice(0, -1)) {
    if (l.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(l);
      if (!m) continue; // a plain comment
      const [, kind, name = '', rest = ''] = m;
      if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name '${name}': ${l}`);
      if (kind === 'HELP') {
        if (helps.has(name)) throw new Error(`HELP repeated for ${name}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`invalid escape in HELP: ${l}`);
        helps.set(name, rest);
        continue;
      }
      if (!isType(rest)) throw new Error(`unknown type '${rest}': ${l}`);
      if (families.has(name)) throw new Error(`TYPE repeated for ${name}`);
      current = { name, type: rest, help: helps.get(name), samples: [] };
      families.set(name, current);
      continue;
    }
    if (l.trim() === '') throw new Error('a blank line inside the exposition');
    const brace = l.indexOf('{');
    const space = l.indexOf(' ');
    const nameEnd = brace >= 0 && (space < 0 || brace < space) ? brace : space;
    if (nameEnd <= 0) throw new Error(`not a sample line: ${l}`);
    const name = l.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name '${name}': ${l}`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (l[i] === '{') ({ labels, end: i } = readLabels(l, i));
    if (l[i] !== ' ') throw new Error(`expected a space before the value: ${l}`);
    const fields = l.slice(i + 1).split(' ');
    if (fields.length > 2 || (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])))
      throw new Error(`value and timestamp malformed: ${l}`);
    const value = parseFloatStrict(fields[0] ?? '', l);
    if (!familyOf(name, current)) throw new Error(`sample '${name}' outside its family's TYPE: ${l}`);
    const series = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(series)) throw new Error(`series repeated: ${l}`);
    seen.add(series);
    current?.samples.push({ name, labels, value });
  }
  const out = [...families.values()];
  for (const f of out) if (f.type === 'histogram') checkHistogram(f);
  return out;
};

export const samplesOf = (families: readonly Family[]): Sample[] => families.flatMap((f) => f.samples);

/** `promtool check metrics` on `text` when promtool is installed (the `prometheus` Debian package): its exit code and output; undefined without it. */
export const promtoolCheck = async (text: string): Promise<{ code: number; output: string } | undefined> => {
  const bin = Bun.which('promtool');
  if (!bin) return undefined;
  const p = Bun.spawn([bin, 'check', 'metrics'], { stdin: new TextEncoder().encode(text), stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, output: `${out}${err}` };
};
