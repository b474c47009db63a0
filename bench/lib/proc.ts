/**
 * Processes for the benchmark: spawning servers pinned to a core, waiting until they are ready,
 * and reading their CPU time and memory from /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { Subprocess } from 'bun';

/** Which cores the servers under test and the load side (wrk, mock upstream, probes) run on. */
export interface Cores {
  server: string | undefined;
  load: string | undefined;
  /** Human-readable description for the report. */
  note: string;
}

export const planCores = (): Cores => {
  const n = cpus().length;
  const taskset = Bun.which('taskset');
  if (!taskset)
    return { server: undefined, load: undefined, note: `${n} cores, not pinned (taskset not found: apt-get install util-linux)` };
  if (n < 2) return { server: undefined, load: undefined, note: '1 core: servers and load generator share it (not pinned)' };
  const load = n >= 4 ? `1-${Math.min(n - 1, 3)}` : '1';
  return { server: '0', load, note: `${n} cores: server under test pinned to core 0, wrk + mock upstream + probes to core ${load}` };
};

export const pinned = (cpu: string | undefined, args: string[]): string[] => (cpu ? ['taskset', '-c', cpu, ...args] : args);

/** Pins an already running process (this orchestrator) to `cpu`. */
export const pinSelf = (cpu: string | undefined): void => {
  if (!cpu) return;
  Bun.spawnSync(['taskset', '-pc', cpu, String(process.pid)], { stdout: 'ignore', stderr: 'ignore' });
};

export interface Service {
  name: string;
  pid: number;
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Every stdout/stderr line so far. */
  lines: string[];
  stop(): Promise<void>;
}

/**
 * Bun's allocator (mimalloc) setting every process under test runs with: what `bun run start` sets
 * (package.json) unless the environment says otherwise — freed memory is kept a second for reuse
 * instead of being returned to the OS 10 ms later (docs/deployment.md, "Memory"). The bare proxy, the
 * mock and Portkey get the same setting, so ratios compare like with like.
 * `MIMALLOC_PURGE_DELAY=10 bun run bench …` measures mimalloc's own default instead.
 */
export const ALLOCATOR_PURGE_DELAY = process.env.MIMALLOC_PURGE_DELAY ?? '1000';

/**
 * The memory JavaScriptCore sizes its heap's growth for (`BUN_JSC_forceRAMSize`) for the processes
 * that stand for the Helm chart's pods, at the chart's default memory limits: the management plane
 * on PostgreSQL (the `--postgres` gateway) 1 GiB, a separate data plane 512 MiB. The embedded
 * gateway, the bare proxy, the mock and Portkey run as `bun run start` does, unset (the machine's
 * memory). `BUN_JSC_forceRAMSize=N bun run bench …` sets N for every process; empty leaves it unset.
 */
export const POSTGRES_JSC_RAM_SIZE = process.env.BUN_JSC_forceRAMSize ?? '1073741824';
export const DATAPLANE_JSC_RAM_SIZE = process.env.BUN_JSC_forceRAMSize ?? '536870912';
export const ramSizeEnv = (size: string): Record<string, string | undefined> => ({ BUN_JSC_forceRAMSize: size === '' ? undefined : size });

/**
 * Spawns `args` and resolves once a stdout line matches `ready` (its match is returned), or fails
 * with the output so far when the process exits or `timeoutMs` passes.
 */
export const spawnService = async (
  name: string,
  args: string[],
  opts: { env?: Record<string, string | undefined>; cwd?: string; ready: RegExp; timeoutMs?: number },
): Promise<{ service: Service; match: RegExpExecArray }> => {
  const proc = Bun.spawn(args, {
    env: { ...process.env, MIMALLOC_PURGE_DELAY: ALLOCATOR_PURGE_DELAY, ...opts.env },
    cwd: opts.cwd,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const lines: string[] = [];
  let onLine: ((l: string) => void) | undefined;
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    let buf = '';
    for await (const chunk of stream) {
      buf += dec.decode(chunk, { stream: true });
      let nl = buf.indexOf('\n');
      while (nl !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (lines.length < 5000) lines.push(line);
        onLine?.(line);
        nl = buf.indexOf('\n');
      }
    }
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  const service: Service = {
    name,
    pid: proc.pid,
    proc,
    lines,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await proc.exited;
      clearTimeout(killer);
    },
  };
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${opts.timeoutMs ?? 60000} ms:\n${lines.slice(-20).join('\n')}`)),
      opts.timeoutMs ?? 60000,
    );
    for (const l of lines) {
      const m = opts.ready.exec(l);
      if (m) {
        clearTimeout(timer);
        resolve(m);
        return;
      }
    }
    onLine = (l) => {
      const m = opts.ready.exec(l);
      if (m) {
        clearTimeout(timer);
        onLine = undefined;
        resolve(m);
      }
    };
    void proc.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready:\n${lines.slice(-20).join('\n')}`));
    });
  });
  return { service, match };
};

const CLK_TCK = 100; // Linux USER_HZ; /proc times are in these ticks.

/** User + system CPU time in a /proc `stat` line, in ms: fields 14 and 15, counted after the parenthesised name. */
const statCpuMs = (stat: string): number => {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[11]) + Number(rest[12])) * 1000) / CLK_TCK;
};

/** Thread names of a Bun process: the JavaScript (request) thread and Bun's HTTP client thread. */
export const JS_THREAD = 'bun';
export const HTTP_THREAD = 'HTTP Client';

/** CPU µs per request of each thread (by name) between two `threadCpuMs` readings. */
export const threadUsPerRequest = (
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  requests: number,
): Map<string, number> =>
  new Map([...after].map(([name, ms]) => [name, ((ms - (before.get(name) ?? 0)) * 1000) / Math.max(1, requests)] as const));

/** User + system CPU time of each of a process's threads, summed by thread name, in ms. */
export const threadCpuMs = (pid: number): Map<string, number> => {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(name, (out.get(name) ?? 0) + statCpuMs(stat));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
};

/** User + system CPU time of a process (all threads), in ms. */
export const cpuMs = (pid: number): number => {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
};

const statusKb = (pid: number, field: string): number => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
};

/** Resident set size now, MB. */
export const rssMb = (pid: number): number => statusKb(pid, 'VmRSS') / 1024;
/** Peak resident set size, MB. */
export const hwmMb = (pid: number): number => statusKb(pid, 'VmHWM') / 1024;

/** Samples RSS every `everyMs` until stopped; returns the maximum seen. */
export const rssSampler = (pid: number, everyMs = 200) => {
  let max = rssMb(pid);
  const t = setInterval(() => {
    const v = rssMb(pid);
    if (v > max) max = v;
  }, everyMs);
  return {
    stop: (): number => {
      clearInterval(t);
      const v = rssMb(pid);
      return Math.max(max, v);
    },
  };
};

/**
 * Waits until none of `pids` used more than `threshold` of a core over a `windowMs` window (the
 * processes finished deferred work: batched record writes, GC), or `maxMs` passed. Returns ms waited.
 */
export const settle = async (
  pids: readonly number[],
  opts: { windowMs?: number; threshold?: number; maxMs?: number } = {},
): Promise<number> => {
  const windowMs = opts.windowMs ?? 200;
  const threshold = opts.threshold ?? 0.05;
  const maxMs = opts.maxMs ?? 20_000;
  const t0 = performance.now();
  for (;;) {
    const before = pids.map(cpuMs);
    await Bun.sleep(windowMs);
    const busy = pids.some((p, i) => cpuMs(p) - (before[i] ?? 0) > windowMs * threshold);
    if (!busy || performance.now() - t0 > maxMs) return performance.now() - t0;
  }
};
