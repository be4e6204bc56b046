import { REASON_TEXT } from '../../../policy/explain.ts';
import type { RunFeedEvent } from '../../../runtime/index.ts';
import { escapeForTerminal, oneLine } from './escape.ts';

type ApprovalRequested = Extract<RunFeedEvent, { type: 'approval.requested' }>;
type Decided = Extract<RunFeedEvent, { type: 'tool.decided' }>;
type BudgetRequested = Extract<RunFeedEvent, { type: 'budget.requested' }>;

function reasonText(reason: string): string {
  return (REASON_TEXT as Record<string, string | undefined>)[reason] ?? reason;
}

/** What a call acts on, for its one line: the command of a shell call, else its first target. */
export function callTarget(tool: string, args: unknown, decision: Decided['decision'] | null): string {
  const a = (args ?? {}) as Record<string, unknown>;
  if (tool === 'shell' && typeof a.command === 'string') return a.command;
  const t = decision?.targets[0];
  if (t !== undefined) return t.resolved ?? t.input;
  return '-';
}

/** The one line printed per tool call once the policy decided it: tool, decision, target. */
export function decidedLine(event: Decided, args: unknown): string {
  const d = event.decision;
  const target = callTarget(event.tool, args, d);
  return `▸ ${oneLine(event.tool, 80)}  ${d.decision} (${oneLine(d.reason, 60)})  ${oneLine(target)}\n`;
}

/**
 * The approval card shown before a human decides: tool and risk, reason and rule, each resolved
 * target with its root, the cwd and exact command or the diff of a file change. Every value is
 * escaped for the terminal (it may come from the model or a file).
 */
export function approvalCard(e: ApprovalRequested): string {
  const lines = [
    `approval needed  ${oneLine(e.approvalId, 200)}`,
    `  tool:    ${oneLine(e.tool, 80)} (${e.risk})`,
    `  why:     ${oneLine(e.reason, 60)}: ${oneLine(reasonText(e.reason))}`,
    `  rule:    ${oneLine(e.rule.id, 120)} (${e.rule.source})`,
  ];
  for (const t of e.targets) {
    const root = t.root === null ? '' : `, root ${oneLine(t.root, 60)}, ${t.access ?? '-'}`;
    lines.push(`  target:  ${oneLine(t.resolved ?? t.input, 300)}  (${oneLine(t.argument, 30)}${root})`);
  }
  const p = e.preview;
  if (p?.kind === 'command') {
    lines.push(`  cwd:     ${oneLine(p.cwd ?? '-', 300)}`);
    lines.push(`  command: ${escapeForTerminal(p.command)}`);
  } else if (p?.kind === 'diff') {
    if (p.diff === null) lines.push(`  diff:    (${oneLine(p.note ?? 'none', 200)})`);
    else {
      lines.push('  diff:');
      for (const l of p.diff.split('\n')) lines.push(`    ${escapeForTerminal(l)}`);
      if (p.truncated) lines.push('    (diff truncated)');
    }
  } else if (e.args !== null && e.args !== undefined) {
    lines.push(`  args:    ${oneLine(JSON.stringify(e.args) ?? '', 400)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The choices line of the prompt, with only the grants the request is eligible for. */
export function choicesLine(e: ApprovalRequested): string {
  const choices = ['[o]nce'];
  if (e.options.session) choices.push('[s]ession');
  if (e.options.standing) choices.push('[a]lways for this target');
  choices.push('[d]eny');
  return `  answer ${choices.join('  ')}: `;
}

/** The question of a budget request: what was spent, and "continue with +N?". */
export function budgetQuestion(e: BudgetRequested): string {
  return (
    `  budget: ${oneLine(e.dimension, 40)} used ${e.used} of ${e.limit}; ` +
    `continue with +${e.grant}? [y]es  [n]o: `
  );
}

/** How an attended request without a terminal can be decided from another process. */
export function waitingLine(e: ApprovalRequested | BudgetRequested): string {
  const id = oneLine(e.approvalId, 200);
  const what =
    e.type === 'budget.requested' ? `budget ${oneLine(e.dimension, 40)} +${e.grant}` : oneLine(e.tool, 80);
  return (
    `waiting for approval ${id} (${what}, ${oneLine(e.reason, 60)}): ` +
    `decide with \`snotra inbox approve ${id}\` or \`snotra inbox deny ${id} --reason TEXT\`\n`
  );
}
