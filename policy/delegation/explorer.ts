/**
 * The Explorer: a fixed, read-only sub-agent profile for mapping a codebase (DESIGN.md §6).
 */
import type { ToolRule } from '../rules.ts';
import type { AuthorityEnvelope } from './envelope.ts';
import { ruleKey } from './lattice.ts';

/** The only tools an Explorer may ever hold. */
export const EXPLORER_TOOLS: readonly string[] = Object.freeze([
  'git_query',
  'list_dir',
  'read_file',
  'search_files',
]);

/**
 * Rules every Explorer carries in addition to its parent's: whatever ends up in its tool set, no
 * local write, no command execution and no external send is ever allowed.
 */
export const EXPLORER_RULES: readonly ToolRule[] = Object.freeze([
  { id: 'explorer.no-write', risk: 'write-local', effect: 'deny' },
  { id: 'explorer.no-exec', risk: 'exec', effect: 'deny' },
  { id: 'explorer.no-external', risk: 'external', effect: 'deny' },
  { id: 'explorer.no-spawn', tool: 'spawn_agent', effect: 'deny' },
] satisfies ToolRule[]);

/**
 * The Explorer envelope under `parent`, whatever the parent holds or a request says: tools
 * `read_file`, `list_dir`, `search_files`, `git_query` that the parent also has; every parent
 * root read-only (same paths and deny globs); the parent's rules plus `EXPLORER_RULES`; the
 * parent's mode (reads are allowed in `ask`, and never looser than the parent); no secrets, no
 * standing approvals, no delegation. Guarantees `explorerEnvelope(p) ⊑ p`.
 */
export function explorerEnvelope(parent: AuthorityEnvelope): AuthorityEnvelope {
  const parentTools = new Set(parent.tools);
  const keys = new Set(parent.rules.map(ruleKey));
  return {
    mode: parent.mode,
    tools: EXPLORER_TOOLS.filter((t) => parentTools.has(t)),
    rules: [...parent.rules, ...EXPLORER_RULES.filter((r) => !keys.has(ruleKey(r)))],
    roots: parent.roots.map((r) => ({ ...r, access: 'read' as const })),
    secrets: [],
    standingApprovals: [],
    interaction: parent.interaction,
    mayDelegate: false,
  };
}
