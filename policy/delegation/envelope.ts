/**
 * The authority envelope of an agent run (DESIGN.md §6): everything a run may do, as data. A
 * child's envelope is derived from its parent's and never grants more (invariant 5).
 */
import { z } from 'zod';
import { StandingApproval } from '../approvals.ts';
import { Interaction, Mode, RootAccess } from '../risk.ts';
import { WorkspaceRoot } from '../roots.ts';
import { ToolRule } from '../rules.ts';

/** The tool whose use needs `mayDelegate`; an envelope that may not delegate never holds it. */
export const SPAWN_TOOL = 'spawn_agent';

/** A POSIX absolute path, a Windows drive path or a UNC path. */
const ABSOLUTE = /^(\/|[A-Za-z]:[\\/]|\\\\)/;

/**
 * The authority an agent run holds. Root paths are absolute and canonical (see `PathSpace`);
 * `tools` are exact tool names; `rules` only ever reduce authority; `secrets` are secret names;
 * `standingApprovals` are the exact-target approvals the run may use; `interaction` is recorded
 * for the surface and never changes a decision.
 */
export const AuthorityEnvelope = z.strictObject({
  mode: Mode,
  tools: z.array(z.string().min(1)),
  rules: z.array(ToolRule),
  roots: z.array(WorkspaceRoot.refine((r) => ABSOLUTE.test(r.path), { message: 'root paths are absolute' })),
  secrets: z.array(z.string().min(1)),
  standingApprovals: z.array(StandingApproval),
  interaction: Interaction,
  mayDelegate: z.boolean(),
});
export type AuthorityEnvelope = z.infer<typeof AuthorityEnvelope>;

/**
 * A root a child asks for. `path` may be relative (to the parent's primary root); `access`
 * defaults to whatever the parent grants there; `deny` globs are relative to this root.
 */
export const RequestedRoot = z.strictObject({
  path: z.string().min(1),
  access: RootAccess.optional(),
  deny: z.array(z.string()).optional(),
  id: z.string().min(1).optional(),
  primary: z.boolean().optional(),
});
export type RequestedRoot = z.infer<typeof RequestedRoot>;

/**
 * What a child asks for at spawn time. An absent field asks for the parent's (mode, tools,
 * roots, secrets, standing approvals); `mayDelegate` must be asked for explicitly; `rules` are
 * added to the parent's.
 */
export const SpawnRequest = z.strictObject({
  mode: Mode.optional(),
  tools: z.array(z.string().min(1)).optional(),
  rules: z.array(ToolRule).optional(),
  roots: z.array(RequestedRoot).optional(),
  secrets: z.array(z.string().min(1)).optional(),
  standingApprovals: z.array(StandingApproval).optional(),
  mayDelegate: z.boolean().optional(),
});
export type SpawnRequest = z.infer<typeof SpawnRequest>;

/** What part of a request was narrowed. */
export const NarrowingKind = z.enum([
  'mode',
  'tool',
  'root',
  'access',
  'secret',
  'standing-approval',
  'delegation',
]);
export type NarrowingKind = z.infer<typeof NarrowingKind>;

/** Why a part of a request was narrowed: a closed set of codes for the spawn result and audit. */
export const NarrowingReason = z.enum([
  'parent_mode_stricter',
  'not_in_parent_tools',
  'delegation_not_granted',
  'invalid_root_path',
  'outside_parent_roots',
  'denied_by_parent',
  'denied_by_request',
  'parent_root_read_only',
  'not_held_by_parent',
  'parent_may_not_delegate',
]);
export type NarrowingReason = z.infer<typeof NarrowingReason>;

/**
 * One refusal of something the child asked for (or would have inherited): `item` names it (a
 * tool name, a mode, a root path as requested, a secret name, a standing approval id).
 */
export const Narrowing = z.strictObject({ kind: NarrowingKind, item: z.string(), reason: NarrowingReason });
export type Narrowing = z.infer<typeof Narrowing>;
