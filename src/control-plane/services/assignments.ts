import { t } from 'elysia';
import { projectModels, projectProviders } from '../../store/schema/index.ts';
import { op, type OpDef } from '../connect.ts';
import { type ControlDeps, recordChange, type Tx } from '../deps.ts';
import { findProject, uniquely } from '../lookups.ts';
import { CustomerRef, ProjectRef, Uuid, ts } from '../schemas.ts';
import { findModel, modelView } from './catalog.ts';

const ADMIN = 'admin.v1.AdminService' as const;
const scope = (i: { customerId: string; projectId: string }) => ({ customerId: i.customerId, projectId: i.projectId });

/** Enables a provider for a project; idempotent. Used by AddProjectProvider and connections. */
export const enableProvider = async (tx: Tx, customerId: string, projectId: string, providerName: string): Promise<void> => {
  await tx.insert(projectProviders).values({ customerId, projectId, providerName }).onConflictDoNothing();
};

export const assignmentOps = (deps: ControlDeps): OpDef[] => [
  op({
    service: ADMIN,
    name: 'AddProjectModel',
    summary: 'Assign a catalog model to a project',
    permission: 'project_admin',
    scope,
    input: t.Object({ customerId: CustomerRef(), projectId: ProjectRef(), modelId: Uuid('catalog entry UUID') }, { additionalProperties: false }),
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const model = await findModel(deps, input.modelId);
      const row = await uniquely(
        () =>
          deps.db.transaction(async (tx) => {
            const [r] = await tx
              .insert(projectModels)
              .values({ customerId: project.customerId, projectId: project.projectId, modelId: model.id })
              .returning();
            await recordChange(tx, { kind: 'PROJECT_MODEL', entity: 'project_model', entityId: model.id, customerId: project.customerId, projectId: project.projectId });
            return r;
          }),
        `model '${model.model}' is already assigned to project '${project.projectId}'`,
        'modelId',
      );
      await deps.changed();
      return {
        entry: {
          id: row?.id,
          customerId: project.customerId,
          projectId: project.projectId,
          modelId: model.id,
          model: modelView(model),
          createdAt: ts(row?.createdAt),
        },
      };
    },
  }),
  op({
    service: ADMIN,
    name: 'AddProjectProvider',
    summary: 'Enable a provider for a project',
    permission: 'project_admin',
    scope,
    input: t.Object(
      { customerId: CustomerRef(), projectId: ProjectRef(), providerName: t.String({ minLength: 1, maxLength: 63 }) },
      { additionalProperties: false },
    ),
    handler: async (input) => {
      const project = await findProject(deps.db, input.customerId, input.projectId);
      const row = await uniquely(
        () =>
          deps.db.transaction(async (tx) => {
            const [r] = await tx
              .insert(projectProviders)
              .values({ customerId: project.customerId, projectId: project.projectId, providerName: input.providerName })
              .returning();
            await recordChange(tx, {
              kind: 'PROJECT_PROVIDER',
              entity: 'project_provider',
              entityId: input.providerName,
              customerId: project.customerId,
              projectId: project.projectId,
            });
            return r;
          }),
        `provider '${input.providerName}' is already enabled for project '${project.projectId}'`,
        'providerName',
      );
      await deps.changed();
      return {
        entry: { id: row?.id, customerId: project.customerId, projectId: project.projectId, providerName: input.providerName, createdAt: ts(row?.createdAt) },
      };
    },
  }),
];
