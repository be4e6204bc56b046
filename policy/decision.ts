import { z } from 'zod';
import { ToolRisk } from './risk.ts';

/** The three outcomes of a policy evaluation. */
export const DecisionKind = z.enum(['allow', 'deny', 'approval-required']);
export type DecisionKind = z.infer<typeof DecisionKind>;

/**
 * The closed union of reason codes. Every Decision carries exactly one; UI, audit and CLI
 * switch over it exhaustively. Documented in README.md ("Reason codes").
 */
export const ReasonCode = z.enum([
  'tool_not_found',
  'tool_not_granted',
  'unannotated_tool',
  'invalid_metadata',
  'invalid_arguments',
  'hardline_command',
  'unanalyzable_command',
  'sandbox_unavailable',
  // Shell fail-closed reasons (approval-required even in `allow`; policy/shell-step.ts):
  // a path only known at run time ($x, $(...), a link the command made, cd -),
  'dynamic_path',
  // inline code of an interpreter or another shell (python3 -c, node -e, nu -c, make -f -),
  'interpreter_code',
  // a path-looking argument of a program without a table, outside the read-write roots,
  'unknown_program_path',
  // a path the command reads, outside every root.
  'read_outside_roots',
  'sensitive_path',
  'never_writable_path',
  'outside_roots',
  'read_only_root',
  'path_denied',
  'invalid_path',
  'exceeds_parent_authority',
  'mode_deny',
  'mode_ask',
  'mode_allow',
  'tool_default_deny',
  'tool_default_ask',
  'tool_rule_deny',
  'tool_rule_ask',
  'session_approval',
  'standing_approval',
]);
export type ReasonCode = z.infer<typeof ReasonCode>;

/** Where the rule that decided came from. */
export const RuleSource = z.enum([
  'metadata',
  'hardline',
  'sensitive-path',
  'roots',
  'delegation',
  'mode',
  'tool-rule',
  'session-approval',
  'standing-approval',
]);
export type RuleSource = z.infer<typeof RuleSource>;

/** The stable id of the rule that decided, and its source. */
export const RuleRef = z.strictObject({ id: z.string().min(1), source: RuleSource });
export type RuleRef = z.infer<typeof RuleRef>;

/**
 * One resolved target of a call: a path argument after canonicalization (with the root that
 * holds it), or the declared target argument of an external tool (root and access are null).
 */
export const Target = z.strictObject({
  argument: z.string(),
  input: z.string(),
  resolved: z.string().nullable(),
  root: z.string().nullable(),
  access: z.enum(['read', 'read-write']).nullable(),
});
export type Target = z.infer<typeof Target>;

/** The evaluation step (1–9 of DESIGN.md §4) that produced the decision. */
export const Step = z.int().min(1).max(9);

/** The Decision: JSON-serializable, stable field names (DESIGN.md §4). */
export const Decision = z.strictObject({
  decision: DecisionKind,
  reason: ReasonCode,
  risk: ToolRisk,
  rule: RuleRef,
  targets: z.array(Target),
  humanRequired: z.boolean(),
  step: Step,
  /**
   * Optional: what exactly caused the decision, in words safe to show and audit — argument paths,
   * expected types, the matching rule's own pattern; never an argument's value.
   */
  detail: z.string().min(1).max(400).optional(),
  /**
   * Optional: the digest of the tool's declaration the decision was made on (MCP tools listed by a
   * live server). A call is refused at execution when the tool's digest changed since.
   */
  toolDigest: z.string().min(1).max(128).optional(),
});
export type Decision = z.infer<typeof Decision>;

/** Human-readable names of the evaluation steps, for explanations. */
export const STEP_NAMES: Readonly<Record<number, string>> = {
  1: 'tool and security metadata',
  2: 'hardline commands and sensitive host paths',
  3: 'canonical paths and workspace roots',
  4: 'delegated authority',
  5: 'global mode',
  6: 'tool and category rules',
  7: 'session approvals',
  8: 'standing approvals',
  9: 'result',
};
