import { z } from 'zod';
import { ToolRisk } from './risk.ts';

/** Where a tool comes from. Only `builtin` tools may fall back on name-based inference. */
export const ToolSource = z.enum(['builtin', 'extension', 'skill', 'mcp']);
export type ToolSource = z.infer<typeof ToolSource>;

/** The approval a tool asks for by default; it can only make the mode stricter. */
export const ApprovalDefault = z.enum(['allow', 'ask', 'deny']);
export type ApprovalDefault = z.infer<typeof ApprovalDefault>;

/**
 * Security metadata every tool must resolve to (security model §5). Validated strictly: an
 * unknown field is invalid metadata, so a typo cannot silently drop a restriction.
 */
export const ToolSecurityMetadata = z
  .strictObject({
    risk: ToolRisk,
    pathArguments: z.array(z.string().min(1)).optional(),
    /**
     * How path arguments are checked: `roots` (canonicalized and confined to workspace roots,
     * the default) or `sensitive-only` (checked against sensitive host paths only, for tools
     * such as `request_directory_access` whose argument names a path outside the roots).
     */
    pathScope: z.enum(['roots', 'sensitive-only']).optional(),
    targetArgument: z.string().min(1).optional(),
    approvalDefault: ApprovalDefault,
    parallelSafe: z.boolean().optional(),
    source: ToolSource,
    /** Re-running the tool after an interruption has no additional effect. */
    idempotent: z.boolean().optional(),
    /** Approvals never lift this tool's approval requirement: every call needs a human. */
    alwaysAsk: z.boolean().optional(),
  })
  .superRefine((m, ctx) => {
    if (m.alwaysAsk && m.approvalDefault === 'allow') {
      ctx.addIssue({
        code: 'custom',
        path: ['approvalDefault'],
        message: 'alwaysAsk tools cannot default to allow',
      });
    }
  });
export type ToolSecurityMetadata = z.infer<typeof ToolSecurityMetadata>;

/** Strictness order of approval defaults. */
export const APPROVAL_STRICTNESS: Readonly<Record<ApprovalDefault, number>> = { allow: 0, ask: 1, deny: 2 };
