import type { CommandSpec } from './command-spec.ts';
import { JSON_OUT, STATE } from './command-spec.ts';

/** `snotra policy …`: check calls, show the effective policy, run its tests, replay the audit. */
export const POLICY_SPECS: readonly CommandSpec[] = [
  {
    path: ['policy', 'check'],
    summary: 'evaluate calls without executing them (exit 0 allow, 10 approval, 11 deny)',
    usage: '[--config F] [--agent A] (--tool T --args JSON | --stdin) [--json]',
    options: [
      ['--config F', 'the config file'],
      ['--agent A', 'the agent (else the config’s default)'],
      ['--tool T', 'the tool to check'],
      ['--args JSON', 'the call’s arguments, as JSON'],
      ['--stdin', 'read JSON lines {"tool","args","agent"?}'],
      JSON_OUT,
    ],
    examples: [
      `snotra policy check --tool read_file --args '{"path":"/etc/shadow"}'`,
      `echo '{"tool":"shell","args":{"command":"git push"}}' | snotra policy check --stdin --json`,
    ],
    run: async (argv, io, cwd) => (await import('./policy-check.ts')).policyCheckCommand(argv, io, cwd),
  },
  {
    path: ['policy', 'show'],
    summary: 'the effective policy per agent: mode, tools, rules, roots, sensitive paths, grants',
    usage: '[--config F] [--state-dir D] [--agent A] [--json]',
    options: [...STATE, ['--agent A', 'only this agent'], JSON_OUT],
    examples: ['snotra policy show', 'snotra policy show --agent assistant --json'],
    run: async (argv, io, cwd) => (await import('./policy-show.ts')).policyShowCommand(argv, io, cwd),
  },
  {
    path: ['policy', 'test'],
    summary: 'run the examples of every rule (policy tests) and print a table (exit 1 when one fails)',
    usage: '[--config F] [--json]',
    options: [['--config F', 'the config file (else ./snotra.config.json)'], JSON_OUT],
    examples: ['snotra policy test', 'snotra policy test --config proposed.json --json'],
    run: async (argv, io, cwd) => (await import('./policy-test.ts')).policyTestCommand(argv, io, cwd),
  },
  {
    path: ['policy', 'replay'],
    summary: 'what a proposed config would decide for every call in the audit (exit 3 when one gets looser)',
    usage: '--config F [--state-dir D] [--since 7d] [--agent A] [--json]',
    options: [
      ['--config F', 'the proposed config'],
      ['--state-dir D', 'the state dir whose audit is replayed (else the proposed config’s)'],
      ['--since T', 'only calls since 7d, 12h, 30m, 2w or an ISO date'],
      ['--agent A', 'only this agent’s calls'],
      JSON_OUT,
    ],
    examples: [
      'snotra policy replay --config proposed.json',
      'snotra policy replay --config p.json --since 7d --json',
    ],
    run: async (argv, io, cwd) => (await import('./policy-replay.ts')).policyReplayCommand(argv, io, cwd),
  },
];
