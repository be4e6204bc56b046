import { STEP_NAMES, type Decision } from './decision.ts';
import { REASON_TEXT } from './reason-text.ts';

export { REASON_TEXT } from './reason-text.ts';

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
