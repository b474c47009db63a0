import { readdirSync } from 'node:fs';

/**
 * The process metrics of the Prometheus conventions (contract §17) and the event loop's lag,
 * rendered as Prometheus text after the request metrics on `GET /metrics`. They are read when
 * scraped (memory, CPU, descriptors) or sampled by one timer (the lag); nothing of them runs on the
 * request path. They are not exported over OTLP (the OpenTelemetry process metrics are named
 * differently; a collector scraping `/metrics` gets these).
 *
 * - `process_resident_memory_bytes`, `process_cpu_seconds_total` (user + system),
 *   `process_start_time_seconds` (Unix time), `process_open_fds` (Linux: entries of /proc/self/fd)
 * - `gateway_event_loop_lag_seconds`: the largest delay of a LAG_TICK_MS timer since the previous
 *   scrape (a busy or blocked event loop delays every request by as much)
 */

/** How often the lag is sampled. */
export const LAG_TICK_MS = 200;

export interface RuntimeMetrics {
  /** The metrics as Prometheus text (each line ends in a newline); the lag window restarts. */
  render(): string;
  stop(): void;
}

const FD_DIR = '/proc/self/fd';

const openFds = (): number | undefined => {
  try {
    // The listing's own descriptor is one of the entries.
    return readdirSync(FD_DIR).length - 1;
  } catch {
    return undefined;
  }
};

const metric = (name: string, type: 'gauge' | 'counter', help: string, value: number): string =>
  `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`;

export const startRuntimeMetrics = (): RuntimeMetrics => {
  const startSeconds = performance.timeOrigin / 1000;
  let maxLagMs = 0;
  let expected = performance.now() + LAG_TICK_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    const lag = now - expected;
    if (lag > maxLagMs) maxLagMs = lag;
    expected = now + LAG_TICK_MS;
  }, LAG_TICK_MS);
  timer.unref?.();

  return {
    render() {
      const cpu = process.cpuUsage();
      const fds = openFds();
      const lag = Math.max(0, maxLagMs) / 1000;
      maxLagMs = 0;
      return (
        metric('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', process.memoryUsage.rss()) +
        metric('process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.', (cpu.user + cpu.system) / 1e6) +
        metric('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.', startSeconds) +
        (fds === undefined ? '' : metric('process_open_fds', 'gauge', 'Number of open file descriptors.', fds)) +
        metric(
          'gateway_event_loop_lag_seconds',
          'gauge',
          `Largest delay of a ${LAG_TICK_MS} ms timer since the previous scrape: how long the event loop kept work waiting.`,
          lag,
        )
      );
    },
    stop() {
      clearInterval(timer);
    },
  };
};
