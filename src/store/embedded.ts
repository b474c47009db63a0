import { dirname, join } from 'node:path';

/**
 * Files that `bun run build:binary` embeds in the compiled gateway (deploy/build-binary.ts): the
 * migrations (drizzle/) and PGlite's WebAssembly and file-system bundle. The binary's entry
 * registers where they are in its virtual file system before the gateway starts; run from source
 * nothing is registered, migrations are read from the checkout and PGlite finds its own files.
 */

export interface EmbeddedFiles {
  /** drizzle/meta/_journal.json; its SQL files sit beside meta/ as in the checkout. */
  migrationsJournal: string;
  pgliteWasm: string;
  initdbWasm: string;
  pgliteData: string;
}

let embedded: EmbeddedFiles | undefined;

/** Called once by the compiled binary's entry, before anything opens the store. */
export const registerEmbedded = (files: EmbeddedFiles): void => {
  embedded = files;
};

/** What the binary's entry registered (handed to the embedded store's own thread, store/pglite-worker.ts). */
export const embeddedFiles = (): EmbeddedFiles | undefined => embedded;

/** drizzle/ of the checkout, or the embedded copy. */
export const migrationsFolder = (): string =>
  embedded ? dirname(dirname(embedded.migrationsJournal)) : join(import.meta.dir, '..', '..', 'drizzle');

export interface PgliteAssets {
  pgliteWasmModule?: WebAssembly.Module;
  initdbWasmModule?: WebAssembly.Module;
  fsBundle?: Blob;
}

/** PGlite options handing it the embedded files; none from source (it loads its own). */
export const pgliteAssets = async (): Promise<PgliteAssets> => {
  if (!embedded) return {};
  const wasm = async (path: string) => WebAssembly.compile(await Bun.file(path).arrayBuffer());
  const [pgliteWasmModule, initdbWasmModule, data] = await Promise.all([
    wasm(embedded.pgliteWasm),
    wasm(embedded.initdbWasm),
    Bun.file(embedded.pgliteData).arrayBuffer(),
  ]);
  return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([data]) };
};
