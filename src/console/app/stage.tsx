import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.ts';
import { type Change, type Plane, type Stage, settled, stageOn } from './changes.ts';
import { messageOfError } from './fields.ts';
import type { Session } from './session.ts';
import { Table } from './table.tsx';

/**
 * Where changes are on their way to each data plane (saved → recorded → pending → serving, as the
 * seed names the stages), polled from GetConfigStatus: live on the status pages, and under a form
 * until every plane serves the change it saved.
 */

const POLL_MS = 500;
/** A stage line stops polling after this long without its change settling (the status page keeps going). */
const GIVE_UP_MS = 5 * 60_000;
/** After a failed read, the next one waits longer each time, up to this. */
const MAX_RETRY_MS = 10_000;

/**
 * GetConfigStatus, polled while `live` (or until `until` says the planes are where they should be).
 * `seen` gets every answer first. A failed read is shown and retried (backing off): a passing
 * fault — the management plane restarting, a slow answer — never freezes the stage shown.
 */
export function usePlanes(
  session: Session,
  live: boolean,
  until?: (planes: readonly Plane[]) => boolean,
  restart = 0,
  seen?: (planes: readonly Plane[]) => void,
): { planes: Plane[] | undefined; error: string } {
  const [planes, setPlanes] = useState<Plane[] | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    const started = Date.now();
    const again = (ms: number) => {
      if (!stopped) timer = setTimeout(() => void poll(), ms);
    };
    const poll = async () => {
      try {
        const answer = await session.client.call('GetConfigStatus', {});
        if (stopped) return;
        failures = 0;
        seen?.(answer.dataplanes);
        setPlanes(answer.dataplanes);
        setError('');
        const done = until?.(answer.dataplanes) ?? answer.dataplanes.every((p) => p.stage === 'serving');
        if (live || (!done && Date.now() - started < GIVE_UP_MS)) again(live ? 2 * POLL_MS : POLL_MS);
      } catch (e) {
        if (stopped) return;
        // Whatever failed, the line says so and tries again: it never freezes on a stage it cannot read.
        setError(
          e instanceof ApiError ? messageOfError(e.message) : `could not read the status (${e instanceof Error ? e.name : 'error'})`,
        );
        failures++;
        if (live || Date.now() - started < GIVE_UP_MS) again(Math.min(MAX_RETRY_MS, POLL_MS * 2 ** failures));
      }
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [session, live, restart]);
  return { planes, error };
}

/**
 * The changes saved in this sign-in, as they are now. The subscription starts after the first
 * paint: what changed in between (a save's first status read often answers first) is read again
 * when subscribing, else the line would keep showing the change as it was at mount.
 */
export function useChanges(session: Session): readonly Change[] {
  const [changes, setChanges] = useState(session.changes.all());
  useEffect(() => {
    setChanges(session.changes.all());
    return session.changes.subscribe(setChanges);
  }, [session]);
  return changes;
}

export function StageBadge({ stage, plane }: { stage: Stage | string; plane?: string }) {
  return <span class={`badge stage-${stage.replace(' ', '-')}`}>{plane ? `${plane}: ${stage}` : stage}</span>;
}

/** One change's stage on every plane. */
export function ChangeStages({ change, planes }: { change: Change; planes: readonly Plane[] | undefined }) {
  if (!planes || !change.observed) return <StageBadge stage="saved" />;
  return (
    <>
      {planes.map((p) => (
        <StageBadge key={p.dataplaneId} plane={p.dataplaneId} stage={stageOn(change, p)} />
      ))}
    </>
  );
}

/** "Saved." and then the change's stage on each data plane, live until every plane serves it. */
export function StageLine({ session, changeId }: { session: Session; changeId: number }) {
  const changes = useChanges(session);
  const change = changes.find((c) => c.id === changeId);
  const { planes, error } = usePlanes(
    session,
    false,
    (ps) => {
      const c = session.changes.get(changeId);
      return c !== undefined && settled(c, ps);
    },
    changeId,
    // This line appears once the save returned, so any read of its own names the change's revision
    // (when the read saveChange started was lost, this one observes it).
    (ps) => {
      if (session.changes.get(changeId)?.observed === false) session.changes.observe(changeId, ps);
    },
  );
  if (!change) return null;
  return (
    <p class="stage" role="status" aria-live="polite" data-change={change.id}>
      <strong>Saved: {change.what}.</strong>{' '}
      {error ? error : <ChangeStages change={change} planes={change.observed ? planes : undefined} />}
    </p>
  );
}

const when = (at: number): string =>
  new Date(at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');

export function StatusPage({ session }: { session: Session }) {
  const { planes, error } = usePlanes(session, true);
  return <StatusView session={session} planes={planes} error={error} />;
}

/** Each plane's stage of its newest change, and each change saved here with its stage per plane. */
export function StatusView({ session, planes, error }: { session: Session; planes: Plane[] | undefined; error: string }) {
  const changes = useChanges(session);
  return (
    <>
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
          <Table
            label="Data planes"
            columns={['dataplaneId', 'customerId', 'stage', 'desiredRevision', 'appliedRevision', 'lastPollAt', 'faults']}
            rows={planes.map((p) => ({
              key: p.dataplaneId,
              cells: [
                p.dataplaneId,
                p.customerId ?? '',
                <StageBadge stage={p.stage} />,
                p.desiredRevision,
                p.appliedRevision,
                p.lastPollAt ?? '',
                p.faults.join('; '),
              ],
            }))}
          />
        )}
      </section>
      <section aria-labelledby="h-changes">
        <h2 id="h-changes">Changes saved in this console</h2>
        {changes.length === 0 ? (
          <p class="empty">None since you signed in.</p>
        ) : (
          <Table
            label="Changes"
            columns={['saved at', 'change', 'stage per data plane']}
            rows={changes.map((c) => ({ key: String(c.id), cells: [when(c.at), c.what, <ChangeStages change={c} planes={planes} />] }))}
          />
        )}
      </section>
    </>
  );
}
