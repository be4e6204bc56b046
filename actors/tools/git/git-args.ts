/**
 * How the `git_query` executor runs git: the argument check is the policy's own
 * (policy/git-query-args.ts, re-exported here), plus the options it always adds.
 */
export {
  checkGitArgs,
  GIT_QUERY_SUBCOMMANDS,
  REFUSED_LONG_OPTIONS,
  REFUSED_SHORT_OPTIONS,
} from '../../../policy/git-query-args.ts';
export type { GitArgsVerdict } from '../../../policy/git-query-args.ts';

/**
 * Options placed before the subcommand: no pager, no filesystem monitor or hooks, no network
 * (a partial clone would otherwise fetch and could start ssh).
 */
export const GIT_GLOBAL_OPTIONS: readonly string[] = [
  '--no-pager',
  '-c',
  'core.pager=cat',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'protocol.allow=never',
];

/** Options placed right after a diff-producing subcommand: no external diff, no textconv. */
export function subcommandSafetyOptions(sub: string): readonly string[] {
  return sub === 'status' ? [] : ['--no-ext-diff', '--no-textconv'];
}
