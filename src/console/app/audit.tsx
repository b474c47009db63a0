import { Value } from '@sinclair/typebox/value';
import { useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import type { OpOutput } from '../../api/index.ts';
import { OPS } from '../../api/index.ts';
import { fieldsOf } from './fields.ts';
import { SchemaForm } from './form.tsx';
import type { Session } from './session.ts';

/** The audit log: QueryAuditLogs with its filters as a generated form, newest first. */

type Logs = OpOutput<'QueryAuditLogs'>;
const COLUMNS = ['timestamp', 'userId', 'actionType', 'resourceType', 'resourceId', 'statusCode', 'correlationId'] as const;

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
            if (!Value.Check(OPS.QueryAuditLogs.output, got)) throw new ApiError('internal', 'QueryAuditLogs: internal: the answer does not match its schema', 200);
            setAnswer(got);
          }}
        />
      </details>
      {answer ? (
        <>
          <p role="status">{answer.totalCount} matching entries</p>
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Audit entries table">
            <table>
              <thead>
                <tr>
                  {COLUMNS.map((c) => (
                    <th scope="col" key={c}>
                      {c}
                    </th>
                  ))}
                  <th scope="col">details</th>
                </tr>
              </thead>
              <tbody>
                {answer.logs.map((log) => (
                  <tr key={log.id} class={log.success ? '' : 'refused'}>
                    {COLUMNS.map((c) => (
                      <td key={c}>{String(log[c])}</td>
                    ))}
                    <td>
                      <button type="button" class="secondary" aria-expanded={open === log.id} onClick={() => setOpen(open === log.id ? undefined : log.id)}>
                        {open === log.id ? 'Hide' : 'Show'}
                      </button>
                      {open === log.id ? <pre>{JSON.stringify({ requestBody: log.requestBody, responseData: log.responseData, errorMessage: log.errorMessage }, null, 2)}</pre> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </section>
  );
}
