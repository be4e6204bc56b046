import picomatch from 'picomatch';
import { assertPicomatchTerminates } from './paths/picomatch-guard.ts';
import { z } from 'zod';
import type { ToolSecurityMetadata } from './metadata.ts';
import { ToolSource } from './metadata.ts';
import { ToolRisk } from './risk.ts';
import { RuleExamples } from './rule-examples.ts';

/** The tool whose calls a `command` rule matches. */
export const SHELL_TOOL = 'shell';

/** A program or command prefix: words of letters, digits and `._+:@%/=,-` separated by spaces. */
const COMMAND_PATTERN = /^[A-Za-z0-9._+:@%/=,-]+( +[A-Za-z0-9._+:@%/=,-]+)*$/;

function globCompiles(glob: string): boolean {
  try {
    assertPicomatchTerminates(glob);
    picomatch(glob);
    return true;
  } catch {
    return false;
  }
}

/**
 * A tool or category rule. Rules can only keep or reduce authority: their effect is `ask` or
 * `deny`, never `allow`. Every matcher given must match (they are and-ed):
 * - `tool`: an exact name or a prefix ending in `*` (`mcp:github:*`); `risk`; `source`;
 * - `command` (the `shell` tool): a program or a command prefix (`git push`, `npm publish`,
 *   `rm`), matched on the analyzed simple commands, not the raw string;
 * - `path`: a glob relative to the workspace root holding a resolved target (`migrations/**`),
 *   with `access` saying whether it covers `read` or `write` targets (default: both);
 * - `target`: a glob on an external tool's target argument (for a URL, also on its host).
 */
export const ToolRule = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'a stable id: lowercase letters, digits, ".", "_" or "-"'),
    tool: z.string().min(1).optional(),
    risk: ToolRisk.optional(),
    source: ToolSource.optional(),
    command: z
      .string()
      .max(200)
      .regex(COMMAND_PATTERN, 'a program or command prefix such as "git push": words separated by spaces')
      .optional(),
    path: z
      .string()
      .min(1)
      .max(1000)
      .refine(globCompiles, 'a glob relative to the workspace root, such as "migrations/**"')
      .optional(),
    access: z.enum(['read', 'write']).optional(),
    target: z.string().min(1).max(1000).optional(),
    effect: z.enum(['ask', 'deny']),
    /** Policy tests: what the rule's one argument matcher must and must not match (rule-examples.ts). */
    examples: RuleExamples.optional(),
  })
  .superRefine((r, ctx) => {
    const matchers = [r.tool, r.risk, r.source, r.command, r.path, r.target];
    if (matchers.every((m) => m === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'a rule needs at least one of "tool", "risk", "source", "command", "path" or "target"',
      });
    }
    if (r.access !== undefined && r.path === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['access'],
        input: r.access,
        message: '"access" only goes with "path"',
      });
    }
    if (
      r.examples !== undefined &&
      [r.command, r.path, r.target].filter((m) => m !== undefined).length !== 1
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['examples'],
        message: '"examples" go with a rule that has exactly one of "command", "path" or "target"',
      });
    }
    if (r.command !== undefined && r.tool !== undefined && !toolMatches(r.tool, SHELL_TOOL)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tool'],
        input: r.tool,
        message: '"command" matches shell commands: leave "tool" out or make it match "shell"',
      });
    }
  });
export type ToolRule = z.infer<typeof ToolRule>;

/** Whether `pattern` (an exact name or a prefix ending in `*`) names `name`. */
export function toolMatches(pattern: string, name: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

/** True when the rule also looks at the call's arguments (`command`, `path` or `target`). */
export function matchesArguments(rule: ToolRule): boolean {
  return rule.command !== undefined || rule.path !== undefined || rule.target !== undefined;
}

/**
 * Whether the tool-level part of `rule` (`tool`, `risk`, `source`) applies to a call of `tool`
 * with `metadata`. Argument matchers are not looked at here (see policy/rule-step.ts).
 */
export function ruleAppliesToTool(rule: ToolRule, tool: string, metadata: ToolSecurityMetadata): boolean {
  if (rule.tool !== undefined && !toolMatches(rule.tool, tool)) return false;
  if (rule.risk !== undefined && rule.risk !== metadata.risk) return false;
  if (rule.source !== undefined && rule.source !== metadata.source) return false;
  if (rule.command !== undefined && tool !== SHELL_TOOL) return false;
  return true;
}

/**
 * Whether `rule` applies to every call of `tool` with `metadata`, whatever its arguments: its
 * tool-level part matches and it has no argument matcher.
 */
export function ruleMatches(rule: ToolRule, tool: string, metadata: ToolSecurityMetadata): boolean {
  return !matchesArguments(rule) && ruleAppliesToTool(rule, tool, metadata);
}

/**
 * The strictest rule that applies to every call of `tool` (`deny` beats `ask`; the first one
 * wins a tie), or null. Rules with argument matchers are left out: they need the call.
 */
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
