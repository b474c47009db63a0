/** The results of a benchmark run (bench/run.ts), as written to bench/results/*.json. */
import type { Percentiles, ProbeResult } from './probe.ts';
import type { Kind, TargetName } from './requests.ts';

export interface Run {
  rps: number;
  requests: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** CPU time of the process under test per request, µs. */
  cpuUs: number;
  /** RSS of the process under test right after the run, and its peak during it, MB. */
  rssMb: number;
  rssPeakMb: number;
  connections: number;
  durationS: number;
}

export interface FirstEvent {
  target: TargetName;
  kind: Kind;
  result: ProbeResult;
  /** vs direct (same upstream wire), ms. */
  addedP50: number;
  addedP99: number;
}

export interface Results {
  meta: {
    date: string;
    quick: boolean;
    machine: { cpus: number; model: string; cores: string };
    bun: string;
    /** MIMALLOC_PURGE_DELAY every Bun process under test ran with (absent in results written before it was recorded). */
    allocatorPurgeDelay?: string;
    /** BUN_JSC_forceRAMSize of the embedded gateway, the PostgreSQL-store gateway and the separate data plane ('' = unset; absent in older results). */
    jscRamSize?: { gateway: string; postgres?: string; dataplane: string };
    commit: string | undefined;
    durationS: number;
    rounds: number;
    snapshot: { customers: number; routes: number; keys: number; source: string; templateCreatedAt: string };
    provisioning: { firstStartMs: number; configMs: number; keysMs: number } | undefined;
    gatewayStartMs: number;
    gatewayIdleRssMb: number;
    peer: { status: 'ran' | 'skipped'; message: string; version?: string; honoNodeServer?: string };
    postgres: { status: 'ran' | 'skipped' | 'failed'; message: string; provisionMs?: number; idleRssMb?: number };
    /** The separate data plane (`serve --role data`, bench/lib/dataplane.ts); absent in results written before it was measured. */
    dataplane?: { status: 'ran' | 'skipped' | 'failed'; message: string; startMs?: number; idleRssMb?: number };
    /** The product floor (bench/product-proxy.ts `--work product`); absent in results written before it was measured. */
    floor?: { status: 'ran' | 'skipped' | 'failed'; message: string };
    /** CPU µs the metrics observer adds per request (bench/lib/metrics-cost.ts); absent in results written before it was measured. */
    metricsCpuUsPerReq?: number;
    /** bench/governance.ts run by `bun run bench` (ratios to the same gateway without governance; null when not measured). */
    limits?: { memoryRatio: number | null; redisRatio: number | null };
    elapsedS: number;
  };
  /** scenario kind → target → median run. */
  max: Partial<Record<Kind, Partial<Record<TargetName, Run>>>>;
  rounds: Partial<Record<Kind, Partial<Record<TargetName, Run[]>>>>;
  fixed: { rate: number; runs: Partial<Record<TargetName, Run>> } | undefined;
  /** One connection, `requests` sequential non-streaming requests per target (absent in results written before it was measured). */
  c1?: { requests: number; runs: Partial<Record<TargetName, Run>> } | undefined;
  firstEvent: FirstEvent[];
  churn: { steady: Run; churn: Run; changes: number; changeMs: Percentiles } | undefined;
  slow: Partial<Record<TargetName, Run>> | undefined;
  sweep: Partial<Record<TargetName, Run[]>> | undefined;
  /** `recordsQueued`: request records the gateway held in memory after the segment (its /readyz). */
  soak:
    | {
        segments: { t: number; rssMb: number; rps: number; errors: number; recordsQueued?: number }[];
        slopeMbPerMin: number;
        growthMb: number;
      }
    | undefined;
  errorsTotal: number;
  goals: { goal: string; target: string; value: string; met: boolean | undefined }[];
}

/** A run's results before any measurement: every scenario empty. */
export const emptyResults = (meta: Results['meta']): Results => ({
  meta,
  max: {},
  rounds: {},
  fixed: undefined,
  firstEvent: [],
  churn: undefined,
  slow: undefined,
  sweep: undefined,
  soak: undefined,
  errorsTotal: 0,
  goals: [],
});
