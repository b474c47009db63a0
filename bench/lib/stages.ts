/**
 * Where a data plane's request-thread CPU goes, by pipeline stage, read off a JavaScriptCore
 * sampling profile (`bun --cpu-prof`, Chrome's .cpuprofile format). Each sample is given to the
 * innermost frame of our own source (`/src/`) on its stack — a native leaf (`fetch`, `JSON.parse`,
 * the `Response` constructor) counts for the code that called it — and that frame's file and
 * function name its stage (STAGES, first match). Samples on a stack that holds a frame of the record
 * shipping or the configuration pull count for those whatever their leaf (a row serialised for a
 * push is shipping, not the request). Samples with no frame of ours are Bun's own work on the
 * thread (the listener's dispatch, promise jobs, the garbage collector).
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

type Rule = readonly [stage: string, test: (file: string, fn: string) => boolean];

const under =
  (...prefixes: string[]) =>
  (file: string): boolean =>
    prefixes.some((p) => file.startsWith(p));

/** Stages whose frames anywhere on the stack claim the sample. */
const ENCLOSING: readonly Rule[] = [
  ['record shipping to the management plane', under('data-plane/remote/remote-sink.ts', 'api/client.ts', 'core/spool.ts')],
  ['configuration pull', under('data-plane/remote/pull.ts', 'propagation/')],
];

/** Stages of the innermost frame of ours. */
const STAGES: readonly Rule[] = [
  // Streams: the upstream body read and relayed, its frames and events, the client's events written.
  [
    'stream relay (upstream body read, frames written)',
    under('data-plane/relay.ts', 'data-plane/relay-final.ts', 'providers/framing.ts', 'providers/eventstream.ts', 'formats/sse.ts'),
  ],
  ['upstream stream events decoded', (f) => f.startsWith('providers/') && f.endsWith('stream.ts')],
  ['client stream events encoded', (f) => f.startsWith('formats/') && f.endsWith('stream.ts')],
  ['upstream call (Bun fetch)', (f, fn) => f === 'data-plane/upstream.ts' && (fn === 'post' || fn === 'sendUpstream')],
  ['upstream answer read', (f) => f === 'data-plane/upstream.ts' || f === 'core/bounded-read.ts'],
  [
    'upstream request built',
    (f, fn) => (f.startsWith('providers/') && f.endsWith('request.ts')) || fn === 'spliceFirstModel' || fn === 'prepareRequest',
  ],
  ['upstream answer decoded', (f) => f.startsWith('providers/')],
  ['answer written (Response, SSE writer)', under('data-plane/respond.ts', 'pipeline/answer.ts')],
  ['listener, ids, timers', under('data-plane/server.ts', 'core/sweep.ts', 'core/ids.ts')],
  ['authenticate', under('pipeline/auth.ts', 'pipeline/authenticate.ts', 'pipeline/door.ts')],
  ['request body read and parsed', under('pipeline/body.ts', 'core/json-depth.ts')],
  ['request decoded and validated', under('formats/', 'canonical/')],
  ['route resolved', under('pipeline/plan.ts', 'pipeline/resolve.ts', 'pipeline/byok.ts', 'pipeline/hosts.ts', 'core/hosts.ts')],
  ['metrics', under('telemetry/')],
  ['settlement and record row', under('pipeline/settle.ts', 'pipeline/record.ts', 'core/records.ts', 'pipeline/cost.ts')],
  ['records handed to the store thread (embedded)', under('records/', 'store/')],
  ['management plane in the same process', under('control-plane/', 'api/', 'audit/', 'conversations/')],
  ['pipeline and dispatch glue', under('pipeline/', 'data-plane/', 'core/')],
];

export const BUN_ONLY = 'Bun, no frame of ours (listener dispatch, promise jobs, GC)';
const OTHER = 'other code of ours';

const srcFile = (url: string): string | undefined => {
  const i = url.indexOf('/src/');
  return i < 0 ? undefined : url.slice(i + 5);
};

/** Samples per stage (idle and start-up samples left out). */
export const attribute = (p: CpuProfile): Map<string, number> => {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string | null>();
  const stageOf = (leafId: number): string | null => {
    const known = memo.get(leafId);
    if (known !== undefined) return known;
    let inner: { file: string; fn: string } | undefined;
    let enclosing: string | undefined;
    let startUp = false;
    for (let id: number | undefined = leafId; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (!frame) break;
      if (frame.functionName === '(module)' || frame.functionName === '(idle)' || frame.functionName === '(program)') startUp = true;
      const file = srcFile(frame.url);
      if (file === undefined) continue;
      inner ??= { file, fn: frame.functionName };
      enclosing ??= ENCLOSING.find(([, test]) => test(file, frame.functionName))?.[0];
    }
    const stage = startUp
      ? null
      : (enclosing ?? (inner ? (STAGES.find(([, test]) => test(inner.file, inner.fn))?.[0] ?? OTHER) : BUN_ONLY));
    memo.set(leafId, stage);
    return stage;
  };
  const out = new Map<string, number>();
  for (const s of p.samples) {
    const stage = stageOf(s);
    if (stage !== null) out.set(stage, (out.get(stage) ?? 0) + 1);
  }
  return out;
};
