/** Minimal structured logger: one JSON line per event on stderr. Never pass secrets in fields. */
type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold: Level = (process.env.GATEWAY_LOG_LEVEL as Level | undefined) ?? 'info';

export const setLogLevel = (level: Level): void => {
  threshold = level;
};

const emit = (level: Level, msg: string, fields?: Record<string, unknown>): void => {
  if (ORDER[level] < ORDER[threshold]) return;
  process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields })}\n`);
};

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => emit('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => emit('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => emit('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => emit('error', msg, fields),
};
