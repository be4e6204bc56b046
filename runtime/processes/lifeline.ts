/**
 * The lifeline: children die with the runtime, even when the runtime is killed with SIGKILL.
 *
 * Every POSIX child is started as `/bin/sh -c LIFELINE_WRAPPER snotra-child <graceSeconds>
 * <program> <args…>` in a new process group (`detached: true`), with fd 3 connected to a pipe
 * whose only other end is held by the runtime. The wrapper:
 *
 * 1. starts a watcher subshell in the background, in the same process group, whose stdin is the
 *    lifeline and whose stdout/stderr are /dev/null (so it never holds the child's output open);
 * 2. `exec`s the program with fd 3 closed, so the program keeps the wrapper's pid — which is the
 *    process group id — and never sees the lifeline.
 *
 * The runtime never writes to the lifeline, so the watcher's `read` returns only at end of file:
 * when the runtime closed its end (normal teardown) or the kernel closed it because the runtime
 * died (any signal, SIGKILL included). The watcher then ignores SIGTERM itself, sends SIGTERM to
 * its whole process group, waits the grace period and sends SIGKILL to the group — which ends
 * the watcher too. Grandchildren stay in the group unless they move themselves to another one
 * (`setsid`, a shell's job control): those are beyond the reach of a process-group kill.
 */

/** The wrapper script (POSIX `sh`); `$1` is the grace period in seconds, the rest the command. */
export const LIFELINE_WRAPPER = `
grace=$1; shift
(
  while read -r _; do :; done
  trap '' TERM
  kill -TERM 0 2>/dev/null
  sleep "$grace"
  kill -KILL 0 2>/dev/null
) <&3 >/dev/null 2>&1 3<&- &
exec "$@" 3<&-
`;

/**
 * The same wrapper for a program that takes its stdin and stdout on fds 4 and 5 (a stdio server
 * in bubblewrap, see `bwrapStdioArgs`): the pipes move there and fds 0 and 1 become /dev/null.
 */
export const LIFELINE_WRAPPER_HANDED_STDIO = LIFELINE_WRAPPER.replace(
  'exec "$@" 3<&-',
  'exec "$@" 3<&- 4<&0 5>&1 0</dev/null 1>/dev/null',
);

/** The `argv[0]` the wrapper shell runs under (visible in `ps`). */
export const LIFELINE_ARGV0 = 'snotra-child';

/** The arguments of `/bin/sh` that start `command args…` behind the lifeline. */
export function lifelineArgs(
  command: string,
  args: readonly string[],
  graceMs: number,
  options: { readonly handedStdio?: boolean } = {},
): string[] {
  const seconds = Math.max(0.1, graceMs / 1000).toFixed(1);
  const wrapper = options.handedStdio === true ? LIFELINE_WRAPPER_HANDED_STDIO : LIFELINE_WRAPPER;
  return ['-c', wrapper, LIFELINE_ARGV0, seconds, command, ...args];
}
