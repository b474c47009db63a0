/**
 * Rate-limit headroom per connection, for routes with strategy `headroom` (contract §14): what the
 * provider's rate-limit headers said last, or what this data plane sent the connection this minute.
 */
export class Headroom {
  /** By connection id. */
  readonly #byConnection = new Map<string, { requests: number; tokens: number; at: number; minute: number; sent: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A request went to the target's connection (strategy `headroom`); `headers`: the provider's answer, whose rate-limit headers are kept. */
  note(t: { readonly connection: { readonly id: string } }, headers: Headers | undefined): void {
    const now = this.now();
    const minute = Math.floor(now / 60_000);
    let h = this.#byConnection.get(t.connection.id);
    if (h === undefined) {
      h = { requests: Number.NaN, tokens: Number.NaN, at: 0, minute, sent: 0 };
      this.#byConnection.set(t.connection.id, h);
    }
    if (h.minute !== minute) {
      h.minute = minute;
      h.sent = 0;
    }
    h.sent++;
    if (!headers) return;
    const requests = Number(
      headers.get('x-ratelimit-remaining-requests') ?? headers.get('anthropic-ratelimit-requests-remaining') ?? Number.NaN,
    );
    const tokens = Number(headers.get('x-ratelimit-remaining-tokens') ?? headers.get('anthropic-ratelimit-tokens-remaining') ?? Number.NaN);
    if (Number.isFinite(requests) || Number.isFinite(tokens)) {
      h.requests = requests;
      h.tokens = tokens;
      h.at = now;
    }
  }

  /**
   * Ranking key for strategy `headroom` (higher first): the requests left this minute — from the
   * provider's last rate-limit headers (within the minute), else the connection's `rpm` option less
   * what this plane sent this minute; tokens (`tpm`) break ties. Infinity when neither is known.
   */
  of(t: { readonly connection: { readonly id: string } }, options: { readonly rpm?: unknown; readonly tpm?: unknown }): [number, number] {
    const now = this.now();
    const h = this.#byConnection.get(t.connection.id);
    if (h !== undefined && h.at > now - 60_000) {
      const r = Number.isFinite(h.requests) ? h.requests : Number.POSITIVE_INFINITY;
      const k = Number.isFinite(h.tokens) ? h.tokens : Number.POSITIVE_INFINITY;
      return [r, k];
    }
    const sent = h !== undefined && h.minute === Math.floor(now / 60_000) ? h.sent : 0;
    const rpm = typeof options.rpm === 'number' ? options.rpm - sent : Number.POSITIVE_INFINITY;
    const tpm = typeof options.tpm === 'number' ? options.tpm : Number.POSITIVE_INFINITY;
    return [rpm, tpm];
  }
}
