import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An on-disk queue of batches (one text file per batch) kept in name order: the request-record
 * spool of a separate data plane (data-plane/remote/remote-sink.ts) and of the store writer
 * (records/writer.ts). A batch is written whole and then renamed, so a crash never leaves half a
 * batch under a batch name; the batches a previous process left are found again at start. What a
 * batch holds is up to its user — the spool only counts its rows (from the name) and bytes.
 *
 * Names are `<ms since epoch, 15 digits>-<pid>-<sequence>-r<rows>.json`: they sort in the order
 * they were handed out, also across restarts. A name may be reserved before its batch is written
 * (`reserve`): a batch taken out of memory first and spooled later still goes before batches
 * spooled meanwhile.
 */

export interface SpoolStats {
  /** Batch files waiting. */
  batches: number;
  /** Rows those batches hold. */
  rows: number;
  /** Bytes of those files. */
  bytes: number;
}

export interface SpooledBatch {
  readonly name: string;
  readonly text: string;
  readonly rows: number;
}

interface Meta {
  name: string;
  rows: number;
  bytes: number;
}

const ROWS_IN_NAME = /-r(\d+)\.json$/;

export class Spool {
  readonly dir: string;
  /** Oldest first. */
  #files: Meta[] = [];
  #rows = 0;
  #bytes = 0;
  #seq = 0;
  #lastMs = 0;

  /** `rowsOf` counts the rows of a batch whose name does not carry them (files of older versions). */
  constructor(dir: string, rowsOf: (text: string) => number = () => 0) {
    this.dir = dir;
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      try {
        const m = ROWS_IN_NAME.exec(name);
        const rows = m ? Number(m[1]) : rowsOf(readFileSync(join(dir, name), 'utf8'));
        this.#add({ name, rows, bytes: statSync(join(dir, name)).size });
      } catch {
        // Gone or unreadable: not ours to count.
      }
    }
  }

  get stats(): SpoolStats {
    return { batches: this.#files.length, rows: this.#rows, bytes: this.#bytes };
  }

  /** A name after every name handed out so far (no I/O). */
  reserve(): string {
    // Never behind the last name, even when the clock steps back.
    this.#lastMs = Math.max(this.#lastMs, Date.now());
    return `${this.#lastMs.toString().padStart(15, '0')}-${process.pid}-${String(++this.#seq).padStart(9, '0')}`;
  }

  /** Writes a batch (under `reserved` when given). Throws when it cannot be written (disk full, no directory). */
  put(text: string, rows: number, reserved: string = this.reserve()): void {
    const name = `${reserved}-r${rows}.json`;
    const buf = Buffer.from(text);
    mkdirSync(this.dir, { recursive: true });
    const tmp = join(this.dir, `${name}.tmp`);
    try {
      writeFileSync(tmp, buf);
      renameSync(tmp, join(this.dir, name));
    } catch (e) {
      try {
        unlinkSync(tmp);
      } catch {
        // Never created.
      }
      throw e;
    }
    this.#add({ name, rows, bytes: buf.length });
  }

  /** The oldest batch, or undefined when none is waiting (a file gone missing is forgotten). */
  oldest(): SpooledBatch | undefined {
    for (;;) {
      const f = this.#files[0];
      if (!f) return undefined;
      try {
        return { name: f.name, text: readFileSync(join(this.dir, f.name), 'utf8'), rows: f.rows };
      } catch {
        this.#forget(f.name);
      }
    }
  }

  /** The batch is done with: its file is removed. */
  remove(name: string): void {
    try {
      unlinkSync(join(this.dir, name));
    } catch {
      // Already gone.
    }
    this.#forget(name);
  }

  /** Replaces a batch by what is left of it (written whole, then renamed over it), keeping its place. */
  replace(name: string, text: string, rows: number): void {
    const reserved = name.replace(ROWS_IN_NAME, '').replace(/\.json$/, '');
    this.put(text, rows, reserved);
    if (`${reserved}-r${rows}.json` !== name) this.remove(name);
  }

  #add(m: Meta): void {
    const last = this.#files.at(-1);
    const i = !last || last.name < m.name ? -1 : this.#files.findIndex((f) => f.name >= m.name);
    if (i === -1) this.#files.push(m);
    else if (this.#files[i]?.name === m.name) {
      const old = this.#files[i] as Meta;
      this.#rows -= old.rows;
      this.#bytes -= old.bytes;
      this.#files[i] = m;
    } else this.#files.splice(i, 0, m);
    this.#rows += m.rows;
    this.#bytes += m.bytes;
  }

  #forget(name: string): void {
    const i = this.#files.findIndex((f) => f.name === name);
    if (i === -1) return;
    const [f] = this.#files.splice(i, 1);
    this.#rows -= f?.rows ?? 0;
    this.#bytes -= f?.bytes ?? 0;
  }
}
