import { useState } from 'preact/hooks';
import type { OpOutput } from '../../api/index.ts';
import { OPS } from '../../api/index.ts';
import { fieldsOf } from './fields.ts';
import { SchemaForm } from './form.tsx';
import type { Scope } from './resource.tsx';
import { Table } from './table.tsx';

/** The project's request records (SearchRequestRecords), by request id, client request id, key and time, with their bodies. */

type Answer = OpOutput<'SearchRequestRecords'>;
type Rec = Answer['records'][number];

const pretty = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v, null, 2) ?? ''));

function Bodies({ r }: { r: Rec }) {
  return (
    <div class="bodies">
      <h4>Request body</h4>
      <pre tabIndex={0}>{pretty(r.requestBody)}</pre>
      <h4>Response body</h4>
      <pre tabIndex={0}>{pretty(r.responseBody)}</pre>
      {r.sanitized ? <p class="muted">Changed to be stored: {r.sanitized.join(', ')}</p> : null}
    </div>
  );
}

export function RecordsPage({ scope }: { scope: Scope }) {
  const [answer, setAnswer] = useState<Answer | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const fields = fieldsOf(OPS.SearchRequestRecords.input).filter((f) => f.name !== 'pageToken');
  return (
    <section aria-labelledby="h-records">
      <h2 id="h-records">Request records</h2>
      <details class="create" open>
        <summary>Search</summary>
        <SchemaForm
          id="form-SearchRequestRecords"
          fields={fields}
          fixed={{ customerId: scope.customerId, projectId: scope.projectId }}
          submitLabel="Search records"
          onSubmit={async (body) => {
            setAnswer(await scope.session.client.call('SearchRequestRecords', body));
            setOpen(undefined);
          }}
        />
      </details>
      {answer ? (
        <>
          <p role="status">
            {answer.records.length === 0
              ? 'No matching records.'
              : `${answer.records.length} records${answer.nextPageToken ? ' (more: narrow the search)' : ''}`}
          </p>
          {answer.records.length > 0 ? (
            <Table
              label="Request records"
              columns={[
                'timestamp',
                'requestId',
                'clientRequestId',
                'model',
                'target',
                'httpStatus',
                'latencyMs',
                'tokens',
                'cost',
                'bodies',
              ]}
              rows={answer.records.flatMap((r) => [
                {
                  key: r.requestId,
                  class: r.httpStatus >= 400 ? 'refused' : '',
                  cells: [
                    r.timestamp,
                    <code>{r.requestId}</code>,
                    r.clientRequestId ?? '',
                    r.model,
                    `${r.connection}/${r.upstreamModel}`,
                    r.errorCode ? `${r.httpStatus} ${r.errorCode}` : r.httpStatus,
                    r.latencyMs,
                    `${r.usage.promptTokens} in / ${r.usage.completionTokens} out`,
                    `$${r.cost}`,
                    <button
                      type="button"
                      class="secondary"
                      aria-expanded={open === r.requestId}
                      aria-label={`${open === r.requestId ? 'Hide' : 'Show'} bodies of ${r.requestId}`}
                      onClick={() => setOpen(open === r.requestId ? undefined : r.requestId)}
                    >
                      {open === r.requestId ? 'Hide' : 'Show'}
                    </button>,
                  ],
                },
                ...(open === r.requestId ? [{ key: `${r.requestId}-bodies`, class: 'detail', span: true, cells: [<Bodies r={r} />] }] : []),
              ])}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}
