/** Byte helpers that run anywhere (the server, the CLI and the console's browser bundle). */

/** The chunks, one after the other, in one new array. */
export const concatBytes = (chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
};
