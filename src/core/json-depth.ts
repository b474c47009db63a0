import { invalidRequest } from './errors.ts';

/**
 * The nesting bound of request bodies, checked on the JSON text before it is parsed (the body
 * reader, src/pipeline/body.ts); formats/validate.ts re-exports it for the codecs.
 */

/** Deepest nesting of JSON objects and arrays a request body may use (docs/deployment.md, "Listener limits"). */
export const MAX_JSON_DEPTH = 128;

/** Path segments kept while scanning (enough to name the parameter). */
const PATH_LEVELS = 8;
/** Keys whose value is free-form JSON: a too-deep value is reported at the key itself. */
const FREE_FORM = new Set(['parameters', 'input_schema', 'schema', 'input', 'arguments', 'content', 'metadata']);

const paramOf = (segments: readonly (string | number)[]): string | null => {
  const cut = segments.findIndex((s) => typeof s === 'string' && FREE_FORM.has(s));
  const kept = cut >= 0 ? segments.slice(0, cut + 1) : segments.slice(0, 4);
  return kept.length === 0 ? null : kept.join('.');
};

const keyAt = (text: string, from: number, to: number): string => {
  try {
    const k: unknown = JSON.parse(text.slice(from, to + 1));
    return typeof k === 'string' ? k : '';
  } catch {
    return '';
  }
};

/**
 * Refuses JSON text nesting deeper than `limit` before it is parsed (deep values overflow the
 * stack of every recursive walk after parsing: serialisation, records). One linear pass, no
 * recursion; it tracks the path of the first few levels to name the parameter. Text that is not
 * valid JSON is left to JSON.parse.
 */
export const checkNesting = (text: string, limit = MAX_JSON_DEPTH): void => {
  if (text.length <= limit || !deeperThan(text, limit)) return;
  refuseNesting(text, limit);
};

/** Whether `text` nests objects and arrays deeper than `limit` (strings skipped); no allocation. */
const deeperThan = (text: string, limit: number): boolean => {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
  return false;
};

/** The scan of a text found too deep, again, tracking the path to name the parameter in the 400. */
const refuseNesting = (text: string, limit: number): void => {
  let depth = 0;
  // Per level (up to PATH_LEVELS): the current key or index, and whether the level is an array.
  const segs: (string | number)[] = [];
  const isArray: boolean[] = [];
  let lastString = '';
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const start = i;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
      if (depth <= PATH_LEVELS && !isArray[depth - 1]) lastString = keyAt(text, start, i);
    } else if (c === 123 || c === 91) {
      if (++depth > limit) {
        const path = isArray[0] ? null : paramOf(segs.slice(0, Math.min(depth - 1, PATH_LEVELS)));
        const where = path === null ? 'The request body' : `'${path}'`;
        throw invalidRequest(
          `${where} is nested too deeply: JSON objects and arrays may nest at most ${limit} levels.`,
          path,
          'nesting_too_deep',
        );
      }
      if (depth <= PATH_LEVELS) {
        isArray[depth - 1] = c === 91;
        segs[depth - 1] = c === 91 ? 0 : '';
      }
    } else if (c === 125 || c === 93) {
      depth--;
    } else if (depth <= PATH_LEVELS && depth > 0) {
      if (c === 58 && !isArray[depth - 1]) segs[depth - 1] = lastString;
      else if (c === 44 && isArray[depth - 1]) segs[depth - 1] = (segs[depth - 1] as number) + 1;
    }
  }
};
