import { perProject, rowsOf, type SnapshotBuilder } from '../section.ts';

export interface MembersPart {
  /** User ids of the project's current members (user tokens for the project need a membership). */
  members: ReadonlySet<string>;
}

const memberRows = rowsOf((doc) => doc.projectMembers);

/** A project's members. */
export const membersSnapshot = {
  project: perProject((p): MembersPart => ({ members: new Set(memberRows(p).map((m) => m.userId)) })),
} satisfies SnapshotBuilder;
