import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Json, JsonObject } from '../../api/client.ts';
import type { Plane } from './changes.ts';
import { type ResourceDef, ResourcePage, type Scope, text } from './resource.tsx';
import { StageBadge, StatusView, usePlanes } from './stage.tsx';

/**
 * Data planes (workspaces) and project gateways, each with the stage of the newest change addressed
 * to it, live: a project gateway is served by its workspace's data plane, so it shows that plane's.
 */

const str = (v: Json | undefined): string => text(v);

/** The status of every plane, read by the page once for all its rows. */
const Planes = createContext<Plane[] | undefined>(undefined);

function PlaneStage({ id }: { id: string }) {
  const planes = useContext(Planes);
  const plane = planes?.find((p) => p.dataplaneId === id);
  if (!planes) return <span class="muted">…</span>;
  if (!plane) return <span class="muted">no status</span>;
  return (
    <span>
      <StageBadge stage={plane.stage} />{' '}
      <span class="muted">
        r{plane.appliedRevision}/{plane.desiredRevision}
      </span>
    </span>
  );
}

const revision = (row: JsonObject, _s: Scope) => <PlaneStage id={str(row.dataplaneId ?? row.workspaceId)} />;

export const DATAPLANES: ResourceDef = {
  title: 'Data planes',
  scope: 'customer',
  list: 'ListDataplanes',
  create: 'CreateDataplane',
  createLabel: 'Create data plane',
  columns: ['dataplaneId', 'name', 'projectId', 'url', 'stage'],
  cells: { stage: revision },
  update: { op: 'UpdateDataplane', fixed: (row) => ({ id: str(row.id) }), hide: ['labels'] },
  remove: { op: 'DeleteDataplane', label: 'Delete', input: (row) => ({ id: str(row.id) }) },
};

export const PROJECT_GATEWAYS: ResourceDef = {
  title: 'Project gateways',
  scope: 'customer',
  list: 'ListProjectGateways',
  create: 'CreateProjectGateway',
  createLabel: 'Create project gateway',
  columns: ['projectGatewayId', 'workspaceId', 'name', 'url', 'projectIds', 'stage'],
  cells: { projectIds: (row) => (Array.isArray(row.projectIds) ? row.projectIds.map(str).join(', ') : ''), stage: revision },
  update: { op: 'UpdateProjectGateway', fixed: (row) => ({ id: str(row.id), projectId: '' }), hide: ['labels'] },
  remove: { op: 'DeleteProjectGateway', label: 'Delete', input: (row) => ({ id: str(row.id) }) },
};

/** The status of every plane (live), the changes saved here, then the data planes and project gateways. */
export function PlanesPage({ scope, onChanged }: { scope: Scope; onChanged: () => void }) {
  const { planes, error } = usePlanes(scope.session, true);
  return (
    <Planes.Provider value={planes}>
      <StatusView session={scope.session} planes={planes} error={error} />
      {scope.customerId ? (
        <>
          <ResourcePage key={`dp-${scope.customerId}`} def={DATAPLANES} scope={scope} onChanged={onChanged} />
          <ResourcePage key={`pg-${scope.customerId}`} def={PROJECT_GATEWAYS} scope={scope} onChanged={onChanged} />
        </>
      ) : null}
    </Planes.Provider>
  );
}
