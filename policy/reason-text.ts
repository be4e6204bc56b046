// The one table of what each reason code means in words (REASONS): a headline a person reads
// first, and the precise sentence. Pure data with a type-only import: the web app bundles it.
import type { ReasonCode } from './decision.ts';

/** The risk classes a sentence may depend on (the same names as `ToolRisk`). */
type Risk = 'read' | 'write-local' | 'exec' | 'external';

const ASK_BY_RISK: Readonly<Record<Risk, string>> = {
  read: 'Reads need your approval in ask mode',
  'write-local': 'Writes need your approval in ask mode',
  exec: 'Shell commands need your approval in ask mode',
  external: 'Calls outside this computer need your approval in ask mode',
};

/**
 * Each reason code's words: `headline`, what a person is shown first (the web app), and `detail`,
 * the precise sentence (`snotra policy check`, the run's terminal view, and the `tool.denied`
 * observation the model reads). A `Record` over the closed union: a new code does not compile
 * until it has both here.
 */
export const REASONS: Readonly<Record<ReasonCode, { readonly headline: string; readonly detail: string }>> = {
  tool_not_found: {
    headline: 'The model asked for a tool that does not exist',
    detail: 'no tool of that name is defined',
  },
  tool_not_granted: {
    headline: 'This agent is not given that tool',
    detail: 'the tool is defined but not in this agent’s tools',
  },
  unannotated_tool: {
    headline: 'This tool does not say what it does, so a person must decide',
    detail: 'the tool has no security metadata, so every call needs a human',
  },
  invalid_metadata: {
    headline: 'This tool’s security description is invalid, so a person must decide',
    detail: 'the tool’s security metadata is invalid, so every call needs a human',
  },
  invalid_arguments: {
    headline: 'The tool was called with arguments it does not accept',
    detail: 'the arguments do not match the tool’s schema',
  },
  hardline_command: {
    headline: 'This command is never allowed: it could destroy data or the system',
    detail: 'the command matches a hardline rule that no mode or approval can lift',
  },
  unanalyzable_command: {
    headline: 'This command cannot be read ahead of time, so a person must decide',
    detail: 'the command cannot be analyzed statically, so a human must look at it (even in allow mode)',
  },
  sandbox_unavailable: {
    headline: 'No sandbox is available here, so shell commands need your approval',
    detail:
      'no OS sandbox is available to confine the command, so a human must approve it (even in allow mode)',
  },
  dynamic_path: {
    headline: 'The command uses a path only known when it runs, so a person must decide',
    detail:
      'a path of the command is only known at run time (a variable, a substitution, a link it made), so a human must look at it',
  },
  interpreter_code: {
    headline: 'The command runs code inline, so a person must decide',
    detail: 'the command runs inline interpreter code the analysis cannot follow, so a human must look at it',
  },
  unknown_program_path: {
    headline: 'An unfamiliar program touches a path outside the writable folders',
    detail:
      'a program without an analysis table gets a path outside the read-write roots, so a human must look at it',
  },
  read_outside_roots: {
    headline: 'The command reads outside the folders this agent may use',
    detail: 'the command reads a path outside every authorized root, so a human must look at it',
  },
  sensitive_path: {
    headline: 'That path holds credentials or the runtime’s own state: never allowed',
    detail: 'the path is a sensitive host path (credentials, system secrets or the runtime’s own state)',
  },
  never_writable_path: {
    headline: 'That file is never written by an agent (hooks, shell and agent config)',
    detail: 'the path may be read but never written by an agent',
  },
  outside_roots: {
    headline: 'That path is outside the folders this agent may use',
    detail: 'the path is outside every authorized workspace root',
  },
  read_only_root: {
    headline: 'That folder is read-only for this agent',
    detail: 'the path is in a read-only root; writes are refused and cannot be approved',
  },
  path_denied: {
    headline: 'That path is excluded from the folder this agent may use',
    detail: 'the path matches a deny glob of its root',
  },
  invalid_path: {
    headline: 'That path is malformed',
    detail: 'the path is malformed (control characters, NUL, dangling link or unsupported form)',
  },
  exceeds_parent_authority: {
    headline: 'A sub-agent asked for more than its parent may do',
    detail: 'the call exceeds the authority the parent agent delegated',
  },
  mode_deny: {
    headline: 'This agent is in deny mode: tools that act are refused',
    detail: 'the agent’s mode is deny: no tool runs',
  },
  mode_ask: {
    headline: 'Actions need your approval in ask mode',
    detail: 'the agent’s mode is ask: this kind of call needs a human',
  },
  mode_allow: {
    headline: 'Allowed in allow mode',
    detail: 'the agent’s mode allows this call',
  },
  tool_default_deny: {
    headline: 'This tool is refused unless a rule allows it',
    detail: 'the tool’s own metadata refuses every call',
  },
  tool_default_ask: {
    headline: 'This tool always asks a person first',
    detail: 'the tool’s own metadata asks a human for every call',
  },
  tool_rule_deny: {
    headline: 'A rule in your config refuses this',
    detail: 'a tool rule of this agent denies the call',
  },
  tool_rule_ask: {
    headline: 'A rule in your config asks a person first',
    detail: 'a tool rule of this agent requires a human',
  },
  session_approval: {
    headline: 'You allowed this for the session',
    detail: 'a human approved this for the session',
  },
  standing_approval: {
    headline: 'You always allow this exact target',
    detail: 'a standing approval of this task covers this exact tool and target',
  },
};

/** The headline for a reason (sharper for `mode_ask` when the risk is known); the code itself for an unknown one. */
export function reasonText(reason: string, risk?: string | null): string {
  if (reason === 'mode_ask' && risk != null && Object.hasOwn(ASK_BY_RISK, risk))
    return ASK_BY_RISK[risk as Risk];
  return Object.hasOwn(REASONS, reason) ? REASONS[reason as ReasonCode].headline : reason;
}

/** The precise sentence of each reason code (`REASONS[code].detail`). */
export const REASON_TEXT: Readonly<Record<ReasonCode, string>> = Object.fromEntries(
  Object.entries(REASONS).map(([code, words]) => [code, words.detail]),
) as Record<ReasonCode, string>;
