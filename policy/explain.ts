import { STEP_NAMES, type Decision, type ReasonCode } from './decision.ts';

/** One sentence per reason code: what it means for the person reading a decision. */
export const REASON_TEXT: Readonly<Record<ReasonCode, string>> = {
  tool_not_found: 'no tool of that name is defined',
  tool_not_granted: 'the tool is defined but not in this agent’s tools',
  unannotated_tool: 'the tool has no security metadata, so every call needs a human',
  invalid_metadata: 'the tool’s security metadata is invalid, so every call needs a human',
  invalid_arguments: 'the arguments do not match the tool’s schema',
  hardline_command: 'the command matches a hardline rule that no mode or approval can lift',
  unanalyzable_command:
    'the command cannot be analyzed statically, so a human must look at it (even in allow mode)',
  sandbox_unavailable:
    'no OS sandbox is available to confine the command, so a human must approve it (even in allow mode)',
  dynamic_path:
    'a path of the command is only known at run time (a variable, a substitution, a link it made), so a human must look at it',
  interpreter_code:
    'the command runs inline interpreter code the analysis cannot follow, so a human must look at it',
  unknown_program_path:
    'a program without an analysis table gets a path outside the read-write roots, so a human must look at it',
  read_outside_roots: 'the command reads a path outside every authorized root, so a human must look at it',
  sensitive_path:
    'the path is a sensitive host path (credentials, system secrets or the runtime’s own state)',
  never_writable_path: 'the path may be read but never written by an agent',
  outside_roots: 'the path is outside every authorized workspace root',
  read_only_root: 'the path is in a read-only root; writes are refused and cannot be approved',
  path_denied: 'the path matches a deny glob of its root',
  invalid_path: 'the path is malformed (control characters, NUL, dangling link or unsupported form)',
  exceeds_parent_authority: 'the call exceeds the authority the parent agent delegated',
  mode_deny: 'the agent’s mode is deny: no tool runs',
  mode_ask: 'the agent’s mode is ask: this kind of call needs a human',
  mode_allow: 'the agent’s mode allows this call',
  tool_default_deny: 'the tool’s own metadata refuses every call',
  tool_default_ask: 'the tool’s own metadata asks a human for every call',
  tool_rule_deny: 'a tool rule of this agent denies the call',
  tool_rule_ask: 'a tool rule of this agent requires a human',
  session_approval: 'a human approved this for the session',
  standing_approval: 'a standing approval of this task covers this exact tool and target',
};

/** A multi-line, human-readable explanation of a decision: which step, which rule, which target. */
export function explainDecision(tool: string, d: Decision): string {
  const lines = [
    `${d.decision}: ${tool} (${d.risk})`,
    `  decided at step ${d.step} (${STEP_NAMES[d.step] ?? 'unknown'}) by rule ${d.rule.id} [${d.rule.source}]`,
    `  reason: ${d.reason} — ${REASON_TEXT[d.reason]}`,
  ];
  if (d.detail !== undefined) lines.push(`  detail: ${d.detail}`);
  for (const t of d.targets) {
    const where = t.root ? ` (root ${t.root}, ${t.access})` : '';
    lines.push(
      `  target ${t.argument}: ${JSON.stringify(t.input)}${t.resolved ? ` → ${t.resolved}` : ''}${where}`,
    );
  }
  if (d.humanRequired) lines.push('  a human must approve this call before it runs');
  return lines.join('\n');
}
