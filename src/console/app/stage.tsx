import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import type { OpOutput } from '../../api/index.ts';
import { messageOfError } from './fields.ts';
import type { Session } from './session.ts';

/**
 * Where a saved change is on its way to each data plane (saved → recorded → pending → serving, as
 * the seed names the stages), polled from GetConfigStatus until every plane serves it.
 */

type Planes = OpOutput<'GetConfigStatus'>['dataplanes'];

const POLL_MS = 500;
const GIVE_UP_MS = 60_000;

export function usePlanes(session: Session, live: boolean, since = 0): { planes: Planes | undefined; error: string } {
  const [planes, setPlanes] = useState<Planes | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const started = Date.now();
    const poll = async () => {
      try {
        const answer = await session.client.call('GetConfigStatus', {});
        if (stopped) return;
        setPlanes(answer.dataplanes);
        setError('');
        const done = answer.dataplanes.every((p) => p.stage === 'serving');
        if (live || (!done && Date.now() - started < GIVE_UP_MS)) timer = setTimeout(() => void poll(), live ? 2 * POLL_MS : POLL_MS);
      } catch (e) {
        if (!(e instanceof ApiError) || stopped) return;
        setError(messageOfError(e.message));
      }
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [session, live, since]);
  return { planes, error };
}

/** "Saved." and then each data plane's stage of the newest change, live. */
export function StageLine({ session, since }: { session: Session; since: number }) {
  const { planes, error } = usePlanes(session, false, since);
  return (
    <p class="stage" role="status" aria-live="polite">
      <strong>Saved.</strong>{' '}
      {error
        ? error
        : planes === undefined
          ? 'Stage: saved'
          : planes.map((p) => (
              <span key={p.dataplaneId} class={`badge stage-${p.stage}`}>
                {p.dataplaneId}: {p.stage}
              </span>
            ))}
    </p>
  );
}

export function StatusPage({ session }: { session: Session }) {
  const { planes, error } = usePlanes(session, true);
  return (
    <section aria-labelledby="h-status">
      <h2 id="h-status">Configuration status</h2>
      <p>The newest configuration change and where each data plane is with it: saved, recorded, pending or serving. Updated live.</p>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {planes === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Data planes table">
          <table>
            <thead>
              <tr>
                {['dataplaneId', 'customerId', 'stage', 'desiredRevision', 'appliedRevision', 'lastPollAt', 'faults'].map((c) => (
                  <th scope="col" key={c}>
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {planes.map((p) => (
                <tr key={p.dataplaneId}>
                  <td>{p.dataplaneId}</td>
                  <td>{p.customerId ?? ''}</td>
                  <td>
                    <span class={`badge stage-${p.stage}`}>{p.stage}</span>
                  </td>
                  <td>{p.desiredRevision}</td>
                  <td>{p.appliedRevision}</td>
                  <td>{p.lastPollAt ?? ''}</td>
                  <td>{p.faults.join('; ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
