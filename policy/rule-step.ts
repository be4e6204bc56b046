/**
 * Step 6 for the agent's rules: which rule applies to this call, with its matchers on the
 * call's arguments (`command`, `path`, `target`). A rule only ever keeps or reduces authority:
 * a certain match has the rule's effect; a possible match (a word only known at run time, a
 * command part that could not be followed, a URL that does not parse) asks a human, also for a
 * `deny` rule — never allows.
 */
import type { Target } from './decision.ts';
import type { ToolSecurityMetadata } from './metadata.ts';
import { matchCommand, weakest, type Match } from './rule-command.ts';
import { matchPath } from './rule-path.ts';
import { matchTarget } from './rule-target.ts';
import { ruleAppliesToTool, type ToolRule } from './rules.ts';
import type { CommandList } from './seams.ts';

/** The parts of a call the rules look at. */
export interface RuleCall {
  readonly tool: string;
  readonly metadata: ToolSecurityMetadata;
  /** The shell command string, for `command` rules; null for other tools. */
  readonly command: string | null;
  /** The call's targets after step 3 (paths resolved; external targets as given). */
  readonly targets: readonly Target[];
}

/** What the rules need beside the call, computed only when a rule needs it. */
export interface RuleDeps {
  /** Lists the simple commands of a command string; null when the analyzer cannot. */
  readonly commands: ((command: string) => CommandList) | null;
  /** Every spelling of every root's path, by root id (see rule-path.ts). */
  rootPaths(): ReadonlyMap<string, readonly string[]>;
}

/** The rule that decides step 6: its effect (`ask` for a possible match) and why. */
export interface RuleOutcome {
  readonly rule: ToolRule;
  readonly effect: 'ask' | 'deny';
  readonly detail: string | undefined;
}

/** Whether the call writes `target`: a write-local tool's paths, the files a command writes. */
export function writesTarget(metadata: ToolSecurityMetadata, target: Target): boolean {
  return metadata.risk === 'write-local' || (metadata.risk === 'exec' && target.argument === 'command');
}

function describe(rule: ToolRule, match: Match): string | undefined {
  const parts: string[] = [];
  if (rule.command !== undefined) parts.push(`command ${JSON.stringify(rule.command)}`);
  if (rule.path !== undefined)
    parts.push(`path ${JSON.stringify(rule.path)}${rule.access ? ` (${rule.access})` : ''}`);
  if (rule.target !== undefined) parts.push(`target ${JSON.stringify(rule.target)}`);
  if (parts.length === 0) return undefined;
  const what = parts.join(', ');
  if (match === 'yes') return `the call matches ${what}`;
  const effect = rule.effect === 'deny' ? 'a deny rule asks instead' : 'a human decides';
  return `the call may match ${what} (a part is only known at run time or could not be followed); ${effect}`;
}

/** How `rule` matches the call: its tool-level part and every argument matcher it has. */
export function matchRule(
  rule: ToolRule,
  call: RuleCall,
  deps: RuleDeps,
  list: () => CommandList | null,
): Match {
  if (!ruleAppliesToTool(rule, call.tool, call.metadata)) return 'no';
  let m: Match = 'yes';
  if (rule.command !== undefined) {
    m = weakest(m, call.command === null ? 'no' : matchCommand(rule.command, list()));
    if (m === 'no') return m;
  }
  if (rule.path !== undefined) {
    m = weakest(
      m,
      matchPath(rule.path, rule.access, {
        targets: call.targets,
        isWrite: (t) => writesTarget(call.metadata, t),
        rootPaths: () => deps.rootPaths(),
      }),
    );
    if (m === 'no') return m;
  }
  if (rule.target !== undefined) {
    const name = call.metadata.targetArgument;
    const values =
      name === undefined ? [] : call.targets.filter((t) => t.argument === name).map((t) => t.input);
    m = weakest(m, matchTarget(rule.target, values));
  }
  return m;
}

/**
 * The strictest outcome of `rules` for `call`: the first certain `deny`, else the first rule
 * that asks (an `ask` rule, or any rule that possibly matches), else null.
 */
export function applyRules(rules: readonly ToolRule[], call: RuleCall, deps: RuleDeps): RuleOutcome | null {
  let listed: CommandList | null | undefined;
  const list = (): CommandList | null => {
    if (listed === undefined)
      listed = call.command === null || deps.commands === null ? null : deps.commands(call.command);
    return listed;
  };
  let found: RuleOutcome | null = null;
  for (const rule of rules) {
    const m = matchRule(rule, call, deps, list);
    if (m === 'no') continue;
    if (m === 'yes' && rule.effect === 'deny') return { rule, effect: 'deny', detail: describe(rule, m) };
    found ??= { rule, effect: 'ask', detail: describe(rule, m) };
  }
  return found;
}
