import type { RecordStore } from '../../src/records/backend.ts';
import { RecordWriter } from '../../src/records/writer.ts';
import type { RecordEntry } from '../../src/core/records.ts';

/**
 * Ingest through one RecordWriter (src/records/writer.ts) with `writers` batches in flight, as a
 * gateway process writes (GATEWAY_RECORD_WRITERS): `rows` records added as fast as the writer
 * takes them (the producer waits while more than 20 batches are queued), then stop() drains.
 * Rows per second from the first add to the end of the drain.
 */
export const writerIngest = async (
  store: RecordStore,
  o: { writers: number; rows: number; maxBatch?: number; entry: (i: number) => RecordEntry },
): Promise<number> => {
  const maxBatch = o.maxBatch ?? 500;
  const writer = new RecordWriter(store, { flushMs: 50, writers: o.writers, maxBatch, maxQueued: o.rows + 1 });
  writer.start();
  const t0 = performance.now();
  for (let i = 0; i < o.rows; i++) {
    writer.add(o.entry(i));
    if (i % maxBatch === maxBatch - 1) while (writer.stats.queued > 20 * maxBatch) await Bun.sleep(1);
  }
  await writer.stop(600_000);
  const { dropped, queued } = writer.stats;
  if (dropped > 0 || queued > 0) throw new Error(`ingest lost rows: ${dropped} dropped, ${queued} queued`);
  return Math.round(o.rows / ((performance.now() - t0) / 1000));
};
