/**
 * Policy tests: a rule may carry `examples: { match: [...], notMatch: [...] }` — commands for a
 * `command` rule, paths relative to the workspace root for a `path` rule, targets for a `target`
 * rule. Each example is run through the rule's own matcher: a `match` example must match for
 * certain, a `notMatch` example must certainly not (a possible match fails both: the rule does
 * not say what its author meant).
 */
import { z } from 'zod';
import { matchCommand, type Match } from './rule-command.ts';
import { matchPath } from './rule-path.ts';
import { matchTarget } from './rule-target.ts';
import type { CommandList } from './seams.ts';

/** The examples of one rule. */
export const RuleExamples = z.strictObject({
  match: z.array(z.string().min(1).max(4096)).max(100).optional(),
  notMatch: z.array(z.string().min(1).max(4096)).max(100).optional(),
});
export type RuleExamples = z.infer<typeof RuleExamples>;

/** The parts of a rule its examples are run against. */
export interface ExampleRule {
  readonly id: string;
  readonly command?: string | undefined;
  readonly path?: string | undefined;
  readonly access?: 'read' | 'write' | undefined;
  readonly target?: string | undefined;
  readonly examples?: RuleExamples | undefined;
}

/** One example run: what was expected, what the matcher said, and whether they agree. */
export interface ExampleResult {
  readonly ruleId: string;
  readonly matcher: 'command' | 'path' | 'target';
  readonly expect: 'match' | 'notMatch';
  readonly example: string;
  readonly got: Match;
  readonly ok: boolean;
}

const ROOT = '/example-root';

/**
 * Runs every example of `rule`. `commands` lists a command string's simple commands (the shell
 * analyzer's lister); without it a `command` rule's examples are not run (none is returned).
 */
export function runRuleExamples(
  rule: ExampleRule,
  commands: ((command: string) => CommandList) | null,
): ExampleResult[] {
  const ex = rule.examples;
  if (ex === undefined) return [];
  let matcher: ExampleResult['matcher'];
  let test: (example: string) => Match;
  if (rule.command !== undefined) {
    if (commands === null) return [];
    const pattern = rule.command;
    matcher = 'command';
    test = (e) => matchCommand(pattern, commands(e));
  } else if (rule.path !== undefined) {
    const glob = rule.path;
    matcher = 'path';
    test = (e) =>
      matchPath(glob, rule.access, {
        targets: [
          {
            argument: 'path',
            input: e,
            resolved: `${ROOT}/${e.replace(/^\.?\/+/, '')}`,
            root: 'example',
            access: 'read-write',
          },
        ],
        isWrite: () => rule.access === 'write',
        rootPaths: () => new Map([['example', [ROOT]]]),
      });
  } else if (rule.target !== undefined) {
    const glob = rule.target;
    matcher = 'target';
    test = (e) => matchTarget(glob, [e]);
  } else return [];
  const out: ExampleResult[] = [];
  for (const example of ex.match ?? []) {
    const got = test(example);
    out.push({ ruleId: rule.id, matcher, expect: 'match', example, got, ok: got === 'yes' });
  }
  for (const example of ex.notMatch ?? []) {
    const got = test(example);
    out.push({ ruleId: rule.id, matcher, expect: 'notMatch', example, got, ok: got === 'no' });
  }
  return out;
}

/** A config problem line for a failed example (`at`: the rule's config path). */
export function exampleProblem(at: string, r: ExampleResult): string {
  const said = r.got === 'maybe' ? 'may match it' : r.got === 'yes' ? 'matches it' : 'does not match it';
  return `${at}.examples.${r.expect}: rule ${JSON.stringify(r.ruleId)} ${said}: ${JSON.stringify(r.example)} (the ${r.matcher} example ${r.expect === 'match' ? 'must match' : 'must not match'})`;
}
