/**
 * Standalone: one RecordWriter's ingest with 1, 2, 4 … batches in flight (GATEWAY_RECORD_WRITERS)
 * into the embedded PGlite in a data directory, as the gateway runs it (batches of 512,
 * EMBEDDED_RECORD_BATCH), in interleaved rounds (the median per count is shown). PostgreSQL's
 * figure is in bench/records-scale.ts (`record_writer_rows_per_s`).
 *   bun bench/records-writers.ts [--rows 20000] [--writers 1,2,4] [--rounds 3] [--bodies small|none]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { directStore } from '../src/records/backend.ts';
import { openStore } from '../src/store/db.ts';
import { bodiesOf, entryAt } from './lib/records-data.ts';
import { writerIngest } from './lib/writer-ingest.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    writers: { type: 'string', default: '1,2,4' },
    rounds: { type: 'string', default: '3' },
    bodies: { type: 'string', default: 'small' },
  },
});
const ROWS = Number(args.rows);
const WRITERS = args.writers.split(',').map(Number);
const bodies = bodiesOf(args.bodies);
const dir = mkdtempSync(join(tmpdir(), 'records-writers-'));
const store = await openStore({ driver: 'pglite', dataDir: join(dir, 'pg') });
const rates = new Map<number, number[]>(WRITERS.map((n) => [n, []]));
try {
  for (let round = 0; round < Number(args.rounds); round++)
    for (const n of WRITERS) {
      const rate = await writerIngest(directStore(store.db), {
        writers: n,
        rows: ROWS,
        maxBatch: 512,
        entry: (i) => entryAt(i, ROWS, bodies),
      });
      rates.get(n)?.push(rate);
      process.stderr.write(`  round ${round + 1}, ${n} in flight: ${rate} rows/s\n`);
    }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  console.log(
    JSON.stringify({
      store: 'pglite',
      rows: ROWS,
      rows_per_s: Object.fromEntries([...rates].map(([n, xs]) => [`in_flight_${n}`, median(xs)])),
    }),
  );
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
