import { z } from 'zod';
import type { ToolSecurityMetadata } from './metadata.ts';
import { ToolSource } from './metadata.ts';
import { ToolRisk } from './risk.ts';

/**
 * A tool or category rule. Rules can only keep or reduce authority: their effect is `ask` or
 * `deny`, never `allow`. `tool` is an exact name or a prefix ending in `*` (`mcp:github:*`).
 */
export const ToolRule = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'a stable id: lowercase letters, digits, ".", "_" or "-"'),
    tool: z.string().min(1).optional(),
    risk: ToolRisk.optional(),
    source: ToolSource.optional(),
    effect: z.enum(['ask', 'deny']),
  })
  .refine((r) => r.tool !== undefined || r.risk !== undefined || r.source !== undefined, {
    message: 'a rule needs at least one of "tool", "risk" or "source"',
  });
export type ToolRule = z.infer<typeof ToolRule>;

function toolMatches(pattern: string, name: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

/** Whether `rule` applies to a call of `tool` with `metadata`. */
export function ruleMatches(rule: ToolRule, tool: string, metadata: ToolSecurityMetadata): boolean {
  if (rule.tool !== undefined && !toolMatches(rule.tool, tool)) return false;
  if (rule.risk !== undefined && rule.risk !== metadata.risk) return false;
  if (rule.source !== undefined && rule.source !== metadata.source) return false;
  return true;
}

/** The strictest matching rule (`deny` beats `ask`; the first one wins a tie), or null. */
export function strictestRule(
  rules: readonly ToolRule[],
  tool: string,
  metadata: ToolSecurityMetadata,
): ToolRule | null {
  let found: ToolRule | null = null;
  for (const rule of rules) {
    if (!ruleMatches(rule, tool, metadata)) continue;
    if (rule.effect === 'deny') return rule;
    found ??= rule;
  }
  return found;
}
