import { Value } from '@sinclair/typebox/value';
import { useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import type { OpOutput } from '../../api/index.ts';
import { OPS } from '../../api/index.ts';
import { fieldsOf, messageOfError } from './fields.ts';
import { SchemaForm } from './form.tsx';
import { type Verdict, verifyEntry } from './proof.ts';
import type { Session } from './session.ts';
import { Table } from './table.tsx';

/**
 * The audit log: QueryAuditLogs with its filters as a generated form, newest first; each entry's
 * inclusion in its signed checkpoint verified here, in the browser (proof.ts).
 */

type Logs = OpOutput<'QueryAuditLogs'>;
type Log = Logs['logs'][number];
const COLUMNS = ['timestamp', 'userId', 'actionType', 'resourceType', 'resourceId', 'statusCode', 'correlationId'] as const;

function VerdictView({ v }: { v: Verdict }) {
  if (v.reason)
    return (
      <p class="verdict" role="status">
        Not verifiable yet:{' '}
        {v.reason === 'unsealed'
          ? 'the entry is not in a sealed checkpoint yet (windows are sealed every GATEWAY_AUDIT_CHECKPOINT_INTERVAL)'
          : v.reason}
        .
      </p>
    );
  return (
    <div class={`verdict ${v.ok ? 'ok' : 'bad'}`} role="status">
      <strong>{v.ok ? `Verified in checkpoint ${v.checkpointSeq ?? ''}` : 'Verification FAILED'}</strong>
      <ul>
        {v.checks.map((c) => (
          <li key={c.name}>
            {c.ok ? '✓' : '✗'} {c.name}: <span class="muted">{c.detail}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Details({ log, session }: { log: Log; session: Session }) {
  const [verdict, setVerdict] = useState<Verdict | undefined>(undefined);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <div class="audit-detail">
      <pre tabIndex={0}>
        {JSON.stringify({ requestBody: log.requestBody, responseData: log.responseData, errorMessage: log.errorMessage }, null, 2)}
      </pre>
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError('');
          try {
            setVerdict(await verifyEntry(session.client, log.id));
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            setError(messageOfError(e.message));
          } finally {
            setBusy(false);
          }
        }}
      >
        Verify inclusion proof
      </button>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {verdict ? <VerdictView v={verdict} /> : null}
    </div>
  );
}

export function AuditPage({ session }: { session: Session }) {
  const [answer, setAnswer] = useState<Logs | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <section aria-labelledby="h-audit">
      <h2 id="h-audit">Audit log</h2>
      <details class="create" open>
        <summary>Filters</summary>
        <SchemaForm
          id="form-QueryAuditLogs"
          fields={fieldsOf(OPS.QueryAuditLogs.input).filter((f) => f.name !== 'pageToken')}
          submitLabel="Search"
          onSubmit={async (body) => {
            const got = await session.client.callJson('QueryAuditLogs', body);
            if (!Value.Check(OPS.QueryAuditLogs.output, got))
              throw new ApiError('internal', 'QueryAuditLogs: internal: the answer does not match its schema', 200);
            setAnswer(got);
          }}
        />
      </details>
      {answer ? (
        <>
          <p role="status">{answer.totalCount} matching entries</p>
          <Table
            label="Audit entries"
            columns={[...COLUMNS, 'details']}
            rows={answer.logs.flatMap((log) => [
              {
                key: log.id,
                class: log.success ? '' : 'refused',
                cells: [
                  ...COLUMNS.map((c) => String(log[c])),
                  <button
                    type="button"
                    class="secondary"
                    aria-expanded={open === log.id}
                    aria-label={`${open === log.id ? 'Hide' : 'Show'} details of ${log.actionType} ${log.resourceType} ${log.timestamp}`}
                    onClick={() => setOpen(open === log.id ? undefined : log.id)}
                  >
                    {open === log.id ? 'Hide' : 'Show'}
                  </button>,
                ],
              },
              ...(open === log.id
                ? [{ key: `${log.id}-detail`, class: 'detail', span: true, cells: [<Details log={log} session={session} />] }]
                : []),
            ])}
          />
        </>
      ) : null}
    </section>
  );
}
