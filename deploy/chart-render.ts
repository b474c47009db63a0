import { createHash } from 'node:crypto';
import { type Arg, type Node, parse, type Pipe, TemplateError, type Value } from './chart-parse.ts';

/**
 * A renderer for the restricted subset of Helm's template language that deploy/helm/gateway is
 * written in (Helm itself cannot be installed here; deploy/helm/gateway/README.md, "Template
 * subset"). Go text/template syntax: `{{ }}` with `{{-`/`-}}` trimming, comments, pipelines,
 * parenthesised calls, variables (`$x :=`, `$`), `if`/`else if`/`else`, `range` (lists and maps,
 * keys in sorted order as Go does), `with`, `define`/`template`; Helm's `include`; and only these
 * functions: default quote toYaml toJson nindent indent b64enc required printf (not %d) eq ne
 * (strings and booleans: numbers in values are float64, and Go will not compare them to literals)
 * not and or empty hasKey hasSuffix trimSuffix trimPrefix lower trunc urlParse int add mul div max
 * list dict index len sha256sum print toString. Variables are declared (`:=`), never re-assigned (`=`). Field access on a missing value fails as in Go ("nil pointer
 * evaluating"); a missing map key is empty, as Helm's `missingkey=zero`. test/chart-render.test.ts
 * runs the syntax part against Go's own text/template (compiled to WebAssembly) to keep it honest.
 * Parsing is in chart-parse.ts; this module evaluates the parsed tree.
 */

// ---- evaluation ----
const isMap = (v: Value): v is Record<string, Value> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const truthy = (v: Value): boolean =>
  !(
    v === undefined ||
    v === null ||
    v === false ||
    v === 0 ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (isMap(v) && Object.keys(v).length === 0)
  );

const sortKeys = (v: Value): Value =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : isMap(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys(v[k])]),
        )
      : v;

/** Helm's toYaml: keys sorted (sigs.k8s.io/yaml), trailing newline trimmed, `{}`/`[]` when empty. */
export const toYaml = (v: Value): string => {
  if (v === undefined || v === null) return 'null';
  if (isMap(v) && Object.keys(v).length === 0) return '{}';
  if (Array.isArray(v) && v.length === 0) return '[]';
  return Bun.YAML.stringify(sortKeys(v), null, 2).replace(/\n+$/, '');
};

export const printValue = (v: Value): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(printValue).join(' ')}]`;
  return `map[${Object.keys(v as object)
    .sort()
    .map((k) => `${k}:${printValue((v as Record<string, Value>)[k])}`)
    .join(' ')}]`;
};

const sprintf = (fmt: string, args: Value[]): string => {
  let n = 0;
  return fmt.replace(/%[-+ 0#]*\d*(?:\.\d+)?([sdvqf%])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    const a = args[n++];
    if (verb === 'q') return JSON.stringify(printValue(a));
    if (verb === 'd')
      throw new TemplateError('printf %d is not in the subset: Helm values are float64 and Go prints %!d(float64=…); use %v');
    return printValue(a);
  });
};

/** Go refuses to compare a value's number (float64) with a literal one (int): the subset compares no numbers. */
const noNumbers = (a: Value, b: Value): void => {
  if (typeof a === 'number' || typeof b === 'number')
    throw new TemplateError('comparing numbers is not in the subset (Helm values are float64, template literals int: Go refuses the mix)');
};
const num = (v: Value): number =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : 0;
const eq = (a: Value, b: Value): boolean => a === b || (a === undefined && b === null) || (a === null && b === undefined);

type Fn = (...args: Value[]) => Value;

export interface Release {
  Name: string;
  Namespace: string;
  Service: string;
  Revision: number;
  IsInstall: boolean;
  IsUpgrade: boolean;
}

export class Renderer {
  readonly #defines = new Map<string, Node[]>();
  readonly #files = new Map<string, Node[]>();

  /** `files`: template path → source (templates/_*.tpl are helpers: parsed, not rendered). */
  constructor(files: Record<string, string>) {
    for (const [name, src] of Object.entries(files)) {
      try {
        this.#files.set(name, parse(src, this.#defines));
      } catch (e) {
        throw new TemplateError(`${name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  /** Renders every non-helper file with `root` as `.` and `$`. */
  render(root: Value): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, nodes] of this.#files) {
      if (/(^|\/)_[^/]*$/.test(name)) continue;
      try {
        out[name] = this.#exec(nodes, root, new Map([['$', root]]));
      } catch (e) {
        throw new TemplateError(`${name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    return out;
  }

  #funcs(vars: Map<string, Value>): Record<string, Fn> {
    return {
      default: (d, v) => (truthy(v) ? v : d),
      quote: (...a) => a.map((v) => JSON.stringify(printValue(v))).join(' '),
      toYaml: (v) => toYaml(v),
      toJson: (v) => JSON.stringify(sortKeys(v ?? null)),
      indent: (n, s) =>
        printValue(s)
          .split('\n')
          .map((l) => ' '.repeat(num(n)) + l)
          .join('\n'),
      nindent: (n, s) =>
        `\n${printValue(s)
          .split('\n')
          .map((l) => ' '.repeat(num(n)) + l)
          .join('\n')}`,
      b64enc: (s) => Buffer.from(printValue(s)).toString('base64'),
      required: (msg, v) => {
        if (v === undefined || v === null || v === '') throw new TemplateError(printValue(msg));
        return v;
      },
      printf: (f, ...a) => sprintf(printValue(f), a),
      print: (...a) => a.map(printValue).join(''),
      toString: (v: Value) => printValue(v),
      eq: (a, ...bs) =>
        bs.some((b) => {
          noNumbers(a, b);
          return eq(a, b);
        }),
      ne: (a, b) => {
        noNumbers(a, b);
        return !eq(a, b);
      },
      not: (v) => !truthy(v),
      and: (...a) => a.find((v) => !truthy(v)) ?? a[a.length - 1],
      or: (...a) => a.find((v) => truthy(v)) ?? a[a.length - 1],
      empty: (v) => !truthy(v),
      hasKey: (m, k) => isMap(m) && Object.hasOwn(m, printValue(k)),
      hasSuffix: (suffix, s) => printValue(s).endsWith(printValue(suffix)),
      trimSuffix: (suffix, s) =>
        printValue(s).endsWith(printValue(suffix)) ? printValue(s).slice(0, -printValue(suffix).length || undefined) : printValue(s),
      trimPrefix: (prefix, s) =>
        printValue(s).startsWith(printValue(prefix)) ? printValue(s).slice(printValue(prefix).length) : printValue(s),
      lower: (s) => printValue(s).toLowerCase(),
      urlParse: (s) => {
        const u = new URL(printValue(s));
        return {
          scheme: u.protocol.replace(/:$/, ''),
          host: u.host,
          hostname: u.hostname,
          path: u.pathname,
          query: u.search.replace(/^\?/, ''),
          fragment: u.hash.replace(/^#/, ''),
          userinfo: u.username,
        };
      },
      trunc: (n, s) => printValue(s).slice(0, num(n)),
      int: (v) => Math.trunc(num(v)),
      add: (...a) => a.reduce((x: number, y) => x + num(y), 0),
      mul: (...a) => a.reduce((x: number, y) => x * num(y), 1),
      div: (a, b) => Math.trunc(num(a) / num(b)),
      max: (...a) => Math.max(...a.map(num)),
      list: (...a) => a,
      dict: (...a) => {
        const d: Record<string, Value> = {};
        for (let i = 0; i + 1 < a.length; i += 2) d[printValue(a[i])] = a[i + 1];
        return d;
      },
      index: (v, ...keys) => keys.reduce((x: Value, k) => (Array.isArray(x) ? x[num(k)] : isMap(x) ? x[printValue(k)] : undefined), v),
      len: (v) => (typeof v === 'string' || Array.isArray(v) ? v.length : isMap(v) ? Object.keys(v).length : 0),
      sha256sum: (s) => createHash('sha256').update(printValue(s)).digest('hex'),
      include: (name, ctx) => this.#include(printValue(name), ctx, vars),
    };
  }

  #include(name: string, ctx: Value, _vars: Map<string, Value>): string {
    const nodes = this.#defines.get(name);
    if (!nodes) throw new TemplateError(`no template "${name}"`);
    try {
      return this.#exec(nodes, ctx, new Map([['$', ctx]]));
    } catch (e) {
      throw new TemplateError(`template "${name}": ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  #field(base: Value, path: string[], what: string): Value {
    let v = base;
    for (const [i, key] of path.entries()) {
      if (v === undefined || v === null)
        throw new TemplateError(`nil pointer evaluating interface {}.${key} (${what}.${path.slice(0, i + 1).join('.')})`);
      if (!isMap(v)) throw new TemplateError(`can't evaluate field ${key} in type ${Array.isArray(v) ? 'slice' : typeof v}`);
      v = v[key];
    }
    return v;
  }

  #arg(a: Arg, dot: Value, vars: Map<string, Value>): Value {
    switch (a.k) {
      case 'lit':
        return a.v;
      case 'sub':
        return this.#field(this.#pipe(a.p, dot, vars), a.path, '(…)');
      case 'field': {
        if (a.base === '.') return this.#field(dot, a.path, '');
        if (!vars.has(a.base)) throw new TemplateError(`undefined variable "${a.base}"`);
        return this.#field(vars.get(a.base), a.path, a.base);
      }
      case 'ident':
        return this.#call(a.name, [], dot, vars);
    }
  }

  #call(name: string, args: Value[], _dot: Value, vars: Map<string, Value>): Value {
    const fn = this.#funcs(vars)[name];
    if (!fn) throw new TemplateError(`function "${name}" not defined (not in the chart's template subset)`);
    return fn(...args);
  }

  #pipe(p: Pipe, dot: Value, vars: Map<string, Value>): Value {
    let acc: Value;
    let first = true;
    for (const cmd of p.cmds) {
      const [head, ...rest] = cmd;
      if (!head) throw new TemplateError('empty command');
      const extra = first ? [] : [acc];
      if (head.k === 'ident') acc = this.#call(head.name, [...rest.map((a) => this.#arg(a, dot, vars)), ...extra], dot, vars);
      else {
        if (rest.length > 0 || !first) throw new TemplateError(`can't give argument to non-function`);
        acc = this.#arg(head, dot, vars);
      }
      first = false;
    }
    if (p.decl) vars.set(p.decl.name, acc);
    return p.decl ? '' : acc;
  }

  #exec(nodes: Node[], dot: Value, vars: Map<string, Value>): string {
    let out = '';
    for (const n of nodes) {
      switch (n.k) {
        case 'text':
          out += n.s;
          break;
        case 'out': {
          const v = this.#pipe(n.p, dot, vars);
          if (!n.p.decl) out += printValue(v);
          break;
        }
        case 'if': {
          const hit = n.branches.find((b) => truthy(this.#pipe(b.p, dot, vars)));
          out += this.#exec(hit ? hit.body : n.else, dot, new Map(vars));
          break;
        }
        case 'with': {
          const v = this.#pipe(n.p, dot, vars);
          out += truthy(v) ? this.#exec(n.body, v, new Map(vars)) : this.#exec(n.else, dot, new Map(vars));
          break;
        }
        case 'range': {
          const v = this.#pipe(n.p, dot, vars);
          const items: [Value, Value][] = Array.isArray(v)
            ? v.map((x, i) => [i, x])
            : isMap(v)
              ? Object.keys(v)
                  .sort()
                  .map((k) => [k, v[k]])
              : typeof v === 'number'
                ? Array.from({ length: v }, (_, i) => [i, i])
                : [];
          if (items.length === 0) out += this.#exec(n.else, dot, new Map(vars));
          for (const [k, x] of items) {
            const scope = new Map(vars);
            if (n.vars.length === 1 && n.vars[0]) scope.set(n.vars[0], x);
            if (n.vars.length === 2 && n.vars[0] && n.vars[1]) {
              scope.set(n.vars[0], k);
              scope.set(n.vars[1], x);
            }
            out += this.#exec(n.body, x, scope);
          }
          break;
        }
        case 'template': {
          const ctx = n.p ? this.#pipe(n.p, dot, vars) : undefined;
          out += this.#include(n.name, ctx, vars);
          break;
        }
      }
    }
    return out;
  }
}

/** Parses a rendered manifest file into its YAML documents (empty ones dropped). */
export const documents = (text: string): unknown[] =>
  text
    .split(/^---[ \t]*$/m)
    .map((d): unknown => Bun.YAML.parse(d))
    .filter((d) => d !== null && d !== undefined);
