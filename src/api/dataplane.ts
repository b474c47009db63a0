import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { JsonObject, JsonValue } from '../canonical/types.ts';
import type { StoredConversation } from '../core/conversation-store.ts';
import { SealedConfigDocumentSchema } from './config-document.ts';

/**
 * The data plane protocol (contract §5) as data: what a separate data plane sends to the
 * management plane (`POST {apiUri}/dataplane.v1.DataplaneService/{Call}`, a service-account JWT
 * with scope `dataplane`) and what it is answered. The management side
 * (control-plane/dataplane-protocol.ts, dataplane-conversations.ts) validates requests against
 * these and answers in these shapes; the data plane calls them through the typed client
 * (client.ts `ManagementClient.protocol`), which checks every answer against its schema.
 *
 * Objects allow fields they do not declare, so that a data plane and a management plane of
 * neighbouring versions still understand each other.
 */

export const DATAPLANE_SERVICE = 'dataplane.v1.DataplaneService';

/** The longest a Pull is held (`waitSeconds`). */
export const MAX_PULL_WAIT_S = 30;
/** The most records one PushRecords takes. */
export const MAX_RECORDS_PER_PUSH = 5000;
/** The longest project, conversation or item id of the conversation calls. */
export const MAX_CONVERSATION_ID = 256;

/** A revision (int64): a JSON integer or a string of digits; absent, null or '' means none. */
const RevisionIn = () => Type.Optional(Type.Union([Type.Integer(), Type.String({ pattern: '^(-?[0-9]{1,18})?$' }), Type.Null()]));

export const PullRequestSchema = Type.Object({
  /** The revision the data plane serves: the answer is `unchanged` while it is still the desired one. */
  knownRevision: RevisionIn(),
  /** The revision the data plane applied (recorded in `dataplane_status`). */
  appliedRevision: RevisionIn(),
  /** The whole document whatever the revision (start-up and drift sweeps). */
  full: Type.Optional(Type.Boolean()),
  /** Hold the call until the desired revision moves from `knownRevision`, at most this many seconds. */
  waitSeconds: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: MAX_PULL_WAIT_S }), Type.Null()])),
});

const pullHead = {
  /** The data plane's workspace id. */
  dataplaneId: Type.String(),
  customerId: Type.String(),
  /** The desired revision (int64 as a string). */
  revision: Type.String({ pattern: '^[0-9]{1,19}$' }),
};

export const PullResponseSchema = Type.Union([
  Type.Object({ ...pullHead, unchanged: Type.Literal(true) }),
  /** The configuration, every secret sealed for the account (`sealedKey`: the document key sealed to its public key). */
  Type.Object({ ...pullHead, unchanged: Type.Literal(false), document: SealedConfigDocumentSchema, sealedKey: Type.String() }),
]);

/**
 * One pushed request record: the data plane's record entry as one JSON object keyed by
 * `request_records` column names, bodies embedded as the JSON they are. The columns below are
 * required; every other known column is checked against its column type (control-plane/
 * pushed-records.ts) and keys that are no column are ignored. A record the store could not hold
 * as it is, is refused (`errors` of the answer), never taken and dropped.
 */
export const PushedRecordSchema = Type.Object({
  /** A UUID. */
  request_id: Type.String(),
  endpoint: Type.String(),
  /** ISO 8601 with a zone (`Date.toISOString`). */
  received_at: Type.String(),
  http_status: Type.Number(),
  latency_ms: Type.Number(),
  /** Absent, null or '': the account's customer; another customer's records are refused. */
  customer_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  request_body: Type.Optional(Type.Unknown()),
  response_body: Type.Optional(Type.Unknown()),
  sanitized: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type PushedRecord = Static<typeof PushedRecordSchema>;

/** Records are checked one by one (`PushedRecordSchema`): one that is refused does not refuse its batch. */
export const PushRecordsRequestSchema = Type.Object({ records: Type.Array(Type.Unknown(), { maxItems: MAX_RECORDS_PER_PUSH }) });

export const PushRecordsResponseSchema = Type.Object({
  accepted: Type.Integer({ minimum: 0 }),
  rejected: Type.Integer({ minimum: 0 }),
  /** Every refused record (its index in the batch) and why, naming the field: the data plane keeps exactly these, and does not send them again. */
  errors: Type.Optional(Type.Array(Type.Object({ index: Type.Integer({ minimum: 0 }), message: Type.String() }))),
});

const Id = () => Type.String({ minLength: 1, maxLength: MAX_CONVERSATION_ID });
const Json = Type.Unsafe<JsonValue>(Type.Unknown());
const JsonObj = Type.Unsafe<JsonObject>(Type.Record(Type.String(), Type.Unknown()));

/** A stored Responses answer, Messages thread or conversation object (core/conversation-store.ts). */
export const StoredConversationSchema = Type.Union([
  Type.Object({
    kind: Type.Literal('response'),
    id: Id(),
    createdAt: Type.Number(),
    response: JsonObj,
    input: Type.Array(JsonObj),
    background: Type.Optional(
      Type.Object({
        owner: Type.String(),
        leaseUntil: Type.Number(),
        events: Type.Optional(Type.Array(JsonObj)),
        cancelRequested: Type.Optional(Type.Boolean()),
      }),
    ),
  }),
  Type.Object({
    kind: Type.Literal('thread'),
    id: Id(),
    createdAt: Type.Number(),
    system: Type.Optional(Json),
    tools: Type.Optional(Json),
    messages: Type.Array(JsonObj),
    continued: Type.Optional(Type.Boolean()),
  }),
  Type.Object({ kind: Type.Literal('conversation'), id: Id(), createdAt: Type.Number(), metadata: JsonObj, items: Type.Array(JsonObj) }),
]);
type Assignable<A extends B, B> = [A, B];
/** A compile-time check: the schema's type and the store's (core/conversation-store.ts) are assignable both ways. */
export type StoredConversationMatches = [
  Assignable<Static<typeof StoredConversationSchema>, StoredConversation>,
  Assignable<StoredConversation, Static<typeof StoredConversationSchema>>,
];

/** `projectId`: the project's row id; it must be a project the calling data plane serves. */
const ProjectId = () => Id();

export const GetConversationRequestSchema = Type.Object({ projectId: ProjectId(), id: Id() });
export const GetConversationResponseSchema = Type.Object({ conversation: Type.Union([StoredConversationSchema, Type.Null()]) });
export const GetConversationItemRequestSchema = Type.Object({ projectId: ProjectId(), itemId: Id() });
export const GetConversationItemResponseSchema = Type.Object({ item: Type.Union([JsonObj, Type.Null()]) });
export const PutConversationRequestSchema = Type.Object({ projectId: ProjectId(), conversation: StoredConversationSchema });
export const PutConversationResponseSchema = Type.Object({});
export const DeleteConversationRequestSchema = Type.Object({ projectId: ProjectId(), id: Id() });
export const DeleteConversationResponseSchema = Type.Object({ deleted: Type.Boolean() });

/** What a data plane listed of a profile's pinned MCP server (contract §7.1): each tool's name and definition hash. */
export const ReportMcpToolsRequestSchema = Type.Object({
  profileUuid: Id(),
  serverId: Type.String({ minLength: 1, maxLength: 253 }),
  tools: Type.Array(
    Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }), hash: Type.String({ pattern: '^[0-9a-f]{64}$' }) }),
    {
      maxItems: 5000,
    },
  ),
});
export const ReportMcpToolsResponseSchema = Type.Object({});

/** A refusal's body (Connect error JSON); `reason` says why a service account is refused (`revoked`, `expired`). */
export const ProtocolErrorSchema = Type.Object({ code: Type.String(), message: Type.String(), reason: Type.Optional(Type.String()) });

interface ProtocolCall<I extends TObject = TObject, O extends TSchema = TSchema> {
  input: I;
  output: O;
}
const call = <I extends TObject, O extends TSchema>(input: I, output: O): ProtocolCall<I, O> => ({ input, output });

/** Every call of the protocol by name. */
export const PROTOCOL = {
  Pull: call(PullRequestSchema, PullResponseSchema),
  PushRecords: call(PushRecordsRequestSchema, PushRecordsResponseSchema),
  GetConversation: call(GetConversationRequestSchema, GetConversationResponseSchema),
  GetConversationItem: call(GetConversationItemRequestSchema, GetConversationItemResponseSchema),
  PutConversation: call(PutConversationRequestSchema, PutConversationResponseSchema),
  DeleteConversation: call(DeleteConversationRequestSchema, DeleteConversationResponseSchema),
  ReportMcpTools: call(ReportMcpToolsRequestSchema, ReportMcpToolsResponseSchema),
} as const satisfies Record<string, ProtocolCall>;

export type ProtocolName = keyof typeof PROTOCOL;
export type ProtocolInput<N extends ProtocolName> = Static<(typeof PROTOCOL)[N]['input']>;
export type ProtocolOutput<N extends ProtocolName> = Static<(typeof PROTOCOL)[N]['output']>;

/** The path of a protocol call on the management listener. */
export const protocolPath = (name: ProtocolName): string => `/${DATAPLANE_SERVICE}/${name}`;
