import { exampleProblem, runRuleExamples, type ExampleResult } from '../../policy/rule-examples.ts';
import type { CommandList } from '../../policy/seams.ts';
import { ConfigError } from './errors.ts';
import type { Config } from './schema.ts';

/**
 * The problems of every agent rule whose examples it does not behave as (policy tests): each
 * names the rule, the example and what the matcher said. `commands` is the shell analyzer's
 * lister; without it only `path` and `target` examples are run (config parsing is synchronous,
 * the shell grammar loads at boot, where the `command` examples are run).
 */
export function ruleExampleProblems(
  config: Config,
  commands: ((command: string) => CommandList) | null,
): string[] {
  const problems: string[] = [];
  for (const [agent, a] of Object.entries(config.agents)) {
    a.rules.forEach((r, i) => {
      if (commands === null ? r.command !== undefined : r.command === undefined) return;
      for (const result of runRuleExamples(r, commands))
        if (!result.ok) problems.push(exampleProblem(`agents.${agent}.rules[${i}]`, result));
    });
  }
  return problems;
}

/** Throws ConfigError naming every rule whose `command` examples fail (run at boot, with the lister). */
export function assertCommandExamples(
  config: Config,
  file: string | null,
  commands: ((command: string) => CommandList) | undefined,
): void {
  if (commands === undefined) return;
  const problems = ruleExampleProblems(config, commands);
  if (problems.length > 0) throw new ConfigError(file ?? '(embedded defaults)', problems);
}

/** One row of `snotra policy test`: an example of an agent's rule and how it came out. */
export interface PolicyTestRow extends ExampleResult {
  readonly agent: string;
}

/** Runs every example of every agent's rules (`command` ones only with `commands`). */
export function runPolicyTests(
  config: Config,
  commands: ((command: string) => CommandList) | null,
): PolicyTestRow[] {
  const rows: PolicyTestRow[] = [];
  for (const [agent, a] of Object.entries(config.agents))
    for (const r of a.rules)
      for (const result of runRuleExamples(r, commands)) rows.push({ agent, ...result });
  return rows;
}
