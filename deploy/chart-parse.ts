/**
 * The parsing half of the chart's template renderer (chart-render.ts evaluates what this builds):
 * an action's inside lexed into tokens, pipelines parsed, and a template's text and actions parsed
 * into a tree of nodes (`define` blocks collected by name). The subset is described in
 * chart-render.ts.
 */

export type Value = unknown;
export type Node =
  | { k: 'text'; s: string }
  | { k: 'out'; p: Pipe }
  | { k: 'if'; branches: { p: Pipe; body: Node[] }[]; else: Node[] }
  | { k: 'range'; p: Pipe; vars: string[]; body: Node[]; else: Node[] }
  | { k: 'with'; p: Pipe; body: Node[]; else: Node[] }
  | { k: 'template'; name: string; p: Pipe | undefined };
export interface Pipe {
  decl?: { name: string };
  cmds: Arg[][];
}
export type Arg =
  | { k: 'field'; base: string; path: string[] }
  | { k: 'lit'; v: Value }
  | { k: 'ident'; name: string }
  | { k: 'sub'; p: Pipe; path: string[] };

export class TemplateError extends Error {}

// ---- lexing an action's inside into tokens ----
const TOKEN =
  /\s*(?:("(?:[^"\\]|\\.)*")|(`[^`]*`)|(\(|\)|\||:=|=|,)|(\$[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)|(\.(?:[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)?)|(-?\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*))/y;

const tokens = (src: string): string[] => {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    if (/^\s*$/.test(src.slice(TOKEN.lastIndex))) break;
    const m = TOKEN.exec(src);
    if (!m) throw new TemplateError(`cannot read '${src.slice(TOKEN.lastIndex)}'`);
    const t = m[0].trim();
    // `(pipeline).Field`: a field written right after `)` (no space) belongs to it.
    out.push(t.startsWith('.') && t.length > 1 && m[0] === t && out[out.length - 1] === ')' ? `\u0000${t}` : t);
  }
  return out;
};

const parsePipe = (toks: string[]): Pipe => {
  let i = 0;
  const pipe: Pipe = { cmds: [] };
  if (toks[0]?.startsWith('$') && (toks[1] === ':=' || toks[1] === '=')) {
    if (toks[1] === '=') throw new TemplateError(`assignment to ${toks[0]} is not in the chart's template subset (declare with :=)`);
    pipe.decl = { name: toks[0] };
    i = 2;
  }
  const operand = (): Arg => {
    const t = toks[i++];
    if (t === undefined) throw new TemplateError('missing operand');
    if (t === '(') {
      const start = i;
      let depth = 1;
      while (i < toks.length && depth > 0) {
        if (toks[i] === '(') depth++;
        if (toks[i] === ')') depth--;
        i++;
      }
      if (depth !== 0) throw new TemplateError('unclosed (');
      const sub = parsePipe(toks.slice(start, i - 1));
      // `(pipeline).Field`
      const next = toks[i];
      if (next?.startsWith('\u0000.')) {
        i++;
        return { k: 'sub', p: sub, path: next.slice(2).split('.') };
      }
      return { k: 'sub', p: sub, path: [] };
    }
    if (t.startsWith('"')) return { k: 'lit', v: JSON.parse(t) };
    if (t.startsWith('`')) return { k: 'lit', v: t.slice(1, -1) };
    if (/^-?\d/.test(t)) return { k: 'lit', v: Number(t) };
    if (t === 'true' || t === 'false') return { k: 'lit', v: t === 'true' };
    if (t === 'nil') return { k: 'lit', v: undefined };
    if (t.startsWith('.')) return { k: 'field', base: '.', path: t === '.' ? [] : t.slice(1).split('.') };
    if (t.startsWith('$')) {
      const [base = '$', ...path] = t.split('.');
      return { k: 'field', base, path };
    }
    return { k: 'ident', name: t };
  };
  let cmd: Arg[] = [];
  while (i < toks.length) {
    if (toks[i] === '|') {
      i++;
      pipe.cmds.push(cmd);
      cmd = [];
      continue;
    }
    cmd.push(operand());
  }
  pipe.cmds.push(cmd);
  if (pipe.cmds.some((c) => c.length === 0)) throw new TemplateError('empty command in pipeline');
  return pipe;
};

// ---- parsing the template into a tree ----
export const parse = (src: string, defines: Map<string, Node[]>): Node[] => {
  const parts: ({ text: string } | { action: string })[] = [];
  let pos = 0;
  while (pos < src.length) {
    const open = src.indexOf('{{', pos);
    if (open < 0) {
      parts.push({ text: src.slice(pos) });
      break;
    }
    let text = src.slice(pos, open);
    let start = open + 2;
    if (/^-\s/.test(src.slice(start, start + 2))) {
      text = text.replace(/\s+$/, '');
      start += 1;
    }
    const close = src.indexOf('}}', start);
    if (close < 0) throw new TemplateError('unclosed action');
    let action = src.slice(start, close);
    pos = close + 2;
    let trimRight = false;
    if (/\s-$/.test(action)) {
      action = action.slice(0, -1);
      trimRight = true;
    }
    parts.push({ text });
    parts.push({ action: action.trim() });
    if (trimRight) {
      const rest = src.slice(pos);
      pos += rest.length - rest.replace(/^\s+/, '').length;
    }
  }
  let i = 0;
  const block = (stopAt: string[]): { nodes: Node[]; stop: string } => {
    const nodes: Node[] = [];
    while (i < parts.length) {
      const part = parts[i++];
      if (part === undefined) break;
      if ('text' in part) {
        if (part.text) nodes.push({ k: 'text', s: part.text });
        continue;
      }
      const a = part.action;
      if (a.startsWith('/*')) {
        if (!a.endsWith('*/')) throw new TemplateError('unclosed comment');
        continue;
      }
      const word = /^[a-z]+/.exec(a)?.[0] ?? '';
      const rest = a.slice(word.length).trim();
      if (stopAt.includes(word) || (word === 'else' && stopAt.includes('else'))) return { nodes, stop: a };
      if (word === 'if' || word === 'with') {
        const branches: { p: Pipe; body: Node[] }[] = [];
        let cond = rest;
        let elseBody: Node[] = [];
        for (;;) {
          const { nodes: body, stop } = block(['else', 'end']);
          branches.push({ p: parsePipe(tokens(cond)), body });
          if (stop.startsWith('else if') || stop.startsWith('else with')) {
            cond = stop.slice(stop.indexOf(' ', 5) + 1).trim();
            continue;
          }
          if (stop === 'else') elseBody = block(['end']).nodes;
          break;
        }
        if (word === 'if') nodes.push({ k: 'if', branches, else: elseBody });
        else {
          // `with` chains nest: with A … else with B … else … end.
          let tail: Node[] = elseBody;
          for (let b = branches.length - 1; b >= 1; b--) {
            const br = branches[b];
            if (br) tail = [{ k: 'with', p: br.p, body: br.body, else: tail }];
          }
          const first = branches[0];
          if (first) nodes.push({ k: 'with', p: first.p, body: first.body, else: tail });
        }
        continue;
      }
      if (word === 'range') {
        const toks = tokens(rest);
        const vars: string[] = [];
        const decl = toks.indexOf(':=');
        if (decl > 0) vars.push(...toks.slice(0, decl).filter((t) => t !== ','));
        const p = parsePipe(decl > 0 ? toks.slice(decl + 1) : toks);
        const { nodes: body, stop } = block(['else', 'end']);
        nodes.push({ k: 'range', p, vars, body, else: stop === 'else' ? block(['end']).nodes : [] });
        continue;
      }
      if (word === 'define') {
        const name = JSON.parse(rest) as string;
        defines.set(name, block(['end']).nodes);
        continue;
      }
      if (word === 'template') {
        const toks = tokens(rest);
        const name = JSON.parse(toks[0] ?? '""') as string;
        nodes.push({ k: 'template', name, p: toks.length > 1 ? parsePipe(toks.slice(1)) : undefined });
        continue;
      }
      if (word === 'end' || word === 'else') throw new TemplateError(`unexpected {{${a}}}`);
      nodes.push({ k: 'out', p: parsePipe(tokens(a)) });
    }
    if (stopAt.length > 0) throw new TemplateError(`missing {{end}}`);
    return { nodes, stop: '' };
  };
  return block([]).nodes;
};
