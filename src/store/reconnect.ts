/**
 * postgres.js reconnect back-off for every connection of the gateway (the store, the record writer
 * thread, the propagation worker): capped at 1 s, where the driver's default grows to 20 s. While
 * the server is down a query fails within about a second, and once it is back every connection
 * resumes within a second — records queued during an outage are written at once, not up to 20 s
 * later.
 */
export const reconnectBackoff = (retries: number): number => (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, 1);
