import { z } from 'zod';
import type { ToolSecurityMetadata } from './metadata.ts';

/**
 * A session approval: a human approved `tool` for the rest of one session, for one exact
 * target or (for non-exec tools) for any target.
 */
export const SessionApproval = z.strictObject({
  id: z.string().min(1),
  sessionId: z.string().min(1),
  tool: z.string().min(1),
  target: z.string().nullable().default(null),
});
export type SessionApproval = z.infer<typeof SessionApproval>;

/** A standing approval: one task or automation may call one tool on one exact target. */
export const StandingApproval = z.strictObject({
  id: z.string().min(1),
  ownerTaskId: z.string().min(1),
  tool: z.string().min(1),
  target: z.string().min(1),
});
export type StandingApproval = z.infer<typeof StandingApproval>;

/**
 * Whether a tool may ever be covered by a standing approval (invariant 7): only `external`
 * tools with a declared target argument; never shell, never local writes, never a tool that
 * always needs a human.
 */
export function standingApprovalEligible(metadata: ToolSecurityMetadata): boolean {
  return metadata.risk === 'external' && metadata.targetArgument !== undefined && metadata.alwaysAsk !== true;
}

/**
 * Whether a session approval may cover a call: never for tools that always need a human; exec
 * tools only with an exact target (the command), never "any command for the session".
 */
export function sessionApprovalCovers(
  approval: SessionApproval,
  metadata: ToolSecurityMetadata,
  target: string | null,
): boolean {
  if (metadata.alwaysAsk === true) return false;
  if (approval.target === null) return metadata.risk !== 'exec';
  return target !== null && approval.target === target;
}
