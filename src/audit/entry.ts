import { jcs } from '../core/jcs.ts';
import type { AuditLogRow } from '../store/schema/audit.ts';

/**
 * An audit entry on the wire (the seed's AuditLogEntry), exactly as `GetAuditLog` and
 * `QueryAuditLogs` return it. Every field is always present (empty string / `{}` when unknown), so
 * the canonical JSON of an entry — and so its Merkle leaf — is a pure function of the stored row.
 */
export interface AuditLogEntry {
  id: string;
  timestamp: string;
  createdAt: string;
  userId: string;
  userEmail: string;
  actorType: string;
  actionType: string;
  resourceType: string;
  resourceId: string;
  endpoint: string;
  httpMethod: string;
  statusCode: number;
  success: boolean;
  errorMessage: string;
  correlationId: string;
  sourceIp: string;
  userAgent: string;
  metadata: Record<string, unknown>;
  requestBody: Record<string, unknown>;
  requestParams: Record<string, unknown>;
  responseData: Record<string, unknown>;
}

/** The wire form of a stored row (timestamps as RFC 3339 UTC with milliseconds). */
export const auditEntryView = (r: AuditLogRow): AuditLogEntry => ({
  id: r.id,
  timestamp: r.timestamp.toISOString(),
  createdAt: r.createdAt.toISOString(),
  userId: r.userId,
  userEmail: r.userEmail,
  actorType: r.actorType,
  actionType: r.actionType,
  resourceType: r.resourceType,
  resourceId: r.resourceId,
  endpoint: r.endpoint,
  httpMethod: r.httpMethod,
  statusCode: r.statusCode,
  success: r.success,
  errorMessage: r.errorMessage,
  correlationId: r.correlationId,
  sourceIp: r.sourceIp,
  userAgent: r.userAgent,
  metadata: r.metadata,
  requestBody: r.requestBody,
  requestParams: r.requestParams,
  responseData: r.responseData,
});

export { jcs };

const sha256 = (parts: readonly Uint8Array[]): Uint8Array => {
  const h = new Bun.CryptoHasher('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

const LEAF = new Uint8Array([0x00]);
const NODE = new Uint8Array([0x01]);

/** Contract §3.3: leaf hash = SHA-256(0x00 ‖ JCS(entry)). */
export const leafHash = (entry: AuditLogEntry): Uint8Array => sha256([LEAF, new TextEncoder().encode(jcs(entry))]);

/** Contract §3.3: interior node = SHA-256(0x01 ‖ left ‖ right). */
export const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => sha256([NODE, left, right]);
