import { type LOG_LEVELS, readSetting } from '../config/settings.ts';

/**
 * Minimal structured logger: one JSON line per event on stderr.
 *
 * Rules (README "Operating notes"): a log line never carries a request or response body or a
 * secret. Errors are logged through `describeError`, which keeps only the error's class, its code
 * (SQLSTATE for database errors) and the first line of its message, cut short — driver errors
 * quote the failed statement and its parameters in later lines and fields, so nothing else of them
 * is ever printed. A condition that can repeat per request or per tick is logged with `log.every`,
 * once per interval with a count of what was suppressed.
 */
type Level = (typeof LOG_LEVELS)[number];
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
// Until start-up has checked GATEWAY_LOG_LEVEL (main.ts sets it), a bad value reads as `info`.
const initialLevel = (): Level => {
  try {
    return readSetting('GATEWAY_LOG_LEVEL', process.env);
  } catch {
    return 'info';
  }
};
let threshold: Level = initialLevel();

export const setLogLevel = (level: Level): void => {
  threshold = level;
};

/** Where lines go; tests swap it to capture every line. */
let sink: (line: string) => void = (line) => void process.stderr.write(line);
export const setLogSink = (next: ((line: string) => void) | undefined): void => {
  sink = next ?? ((line) => void process.stderr.write(line));
};

/** The longest message excerpt any log line carries. */
const MAX_MESSAGE = 160;

/**
 * A safe, short description of an error for a log line: `Class[code]: first line of the message`,
 * at most 160 characters of message. Never the stack, the query, parameters or driver detail.
 *
 * Never a query: drizzle wraps a driver error in one whose message IS the statement ("Failed query:
 * <sql>\nparams: …"), and driver errors carry the statement in `query`. Such a wrapper is named
 * without its message and its cause (the driver's error: the class, code and message worth
 * reading — "connect ECONNREFUSED …", "terminating connection …") is described after it; any text
 * of a statement found in the chain is cut out of every message.
 */
export const describeError = (e: unknown): string => {
  if (!(e instanceof Error)) return typeof e === 'string' ? `error: ${cut(e)}` : `non-error value (${typeof e})`;
  const chain: Error[] = [];
  for (let cur: unknown = e; cur instanceof Error && chain.length < MAX_CAUSES; cur = cur.cause) chain.push(cur);
  const queries = chain.map((x) => (x as { query?: unknown }).query).filter((q): q is string => typeof q === 'string' && q.trim() !== '');
  const parts: string[] = [];
  for (const x of chain) {
    const code = (x as { code?: unknown }).code;
    const tag = typeof code === 'string' || typeof code === 'number' ? `[${String(code)}]` : '';
    const message = withoutQueries(x.message, queries);
    // drizzle's wrapper keeps the name `Error`: its class says more.
    const name = x.name === 'Error' && x.constructor !== Error && x.constructor.name ? x.constructor.name : x.name;
    parts.push(message === '' ? `${name}${tag}` : `${name}${tag}: ${message}`);
    // A wrapper that said nothing of its own (its message was the query): its cause says what happened.
    if (message !== '') break;
  }
  return parts.join(' ← ');
};

/** How deep a cause chain is followed. */
const MAX_CAUSES = 4;
const FAILED_QUERY = /^\s*Failed query:/i;
/** Statement text shorter than this is not searched for (a message may share a word with it). */
const MIN_QUERY_TEXT = 12;

/** The message's first line, cut short, with no statement text in it ('' when it was one). */
const withoutQueries = (message: string, queries: readonly string[]): string => {
  if (FAILED_QUERY.test(message)) return '';
  let first = message.split('\n', 1)[0] ?? '';
  for (const q of queries) {
    // The statement, or its first line (a message may quote it cut or on one line).
    for (const text of [q.trim(), q.trim().split('\n', 1)[0] ?? ''])
      if (text.length >= MIN_QUERY_TEXT) first = first.split(text).join('<query>');
  }
  return cut(first);
};

const cut = (message: string): string => {
  const first = message.split('\n', 1)[0] ?? '';
  return first.length > MAX_MESSAGE ? `${first.slice(0, MAX_MESSAGE - 1)}…` : first;
};

const emit = (level: Level, msg: string, fields?: Record<string, unknown>): void => {
  if (ORDER[level] < ORDER[threshold]) return;
  sink(`${JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields })}\n`);
};

/** Last time a key was logged, and how many were suppressed since. */
const throttle = new Map<string, { at: number; suppressed: number }>();

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => emit('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => emit('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => emit('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => emit('error', msg, fields),
  /**
   * Logs `msg` at most once per `intervalMs` for `key` (default 60 s); the next line that gets
   * through carries `suppressed`, the number of occurrences not logged in between.
   */
  every: (key: string, level: Level, msg: string, fields?: Record<string, unknown>, intervalMs = 60_000): void => {
    const now = Date.now();
    const seen = throttle.get(key);
    if (seen && now - seen.at < intervalMs) {
      seen.suppressed++;
      return;
    }
    const suppressed = seen?.suppressed ?? 0;
    throttle.set(key, { at: now, suppressed: 0 });
    emit(level, msg, suppressed > 0 ? { ...fields, suppressed } : fields);
  },
};
