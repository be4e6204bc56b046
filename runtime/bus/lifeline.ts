import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The lifeline wrapper, run as `sh -c LIFELINE_SCRIPT snotra-lifeline <ticks> <binary> <args...>`.
 *
 * - Its stdin is a pipe whose only writer is the runtime process. The server itself gets /dev/null.
 * - It starts the server in the background (same process group), prints the server's pid on stdout
 *   (the server's own stdout goes to stderr), and waits for it.
 * - A watcher subshell blocks reading the pipe. The runtime never writes to it, so the read returns
 *   only at EOF, i.e. when the runtime process is gone (also after SIGKILL: the kernel closes its fds).
 *   Then it sends SIGTERM to the server and SIGKILL after `<ticks>` × 0.1 s if it is still alive.
 * - SIGTERM/SIGINT/SIGHUP to the wrapper are forwarded to the server; the wrapper keeps waiting until
 *   the server has really exited and then exits with the server's status (128+n after signal n).
 */
export const LIFELINE_SCRIPT = `
ticks=$1; shift
unset PWD OLDPWD
exec 3<&0 </dev/null
"$@" 3<&- >&2 &
srv=$!
echo "$srv"
trap 'kill -TERM "$srv" 2>/dev/null' TERM INT HUP
{
  while read -r _; do :; done
  kill -TERM "$srv" 2>/dev/null
  n=0
  while kill -0 "$srv" 2>/dev/null; do
    n=$((n + 1))
    if [ "$n" -gt "$ticks" ]; then kill -KILL "$srv" 2>/dev/null; break; fi
    sleep 0.1
  done
} <&3 3<&- &
watcher=$!
exec 3<&-
while :; do
  wait "$srv"
  rc=$?
  kill -0 "$srv" 2>/dev/null || break
done
kill "$watcher" 2>/dev/null
exit "$rc"
`;

/** A server started behind the lifeline wrapper. */
export interface LifelineChild {
  /** The wrapper (`sh`): leader of its own process group; its pid is the group id. */
  readonly wrapper: ChildProcess;
  /** The process group id to signal (negative pid) to reach wrapper, watcher and server at once. */
  readonly pgid: number;
  /** Resolves with the server's pid once the wrapper reports it; rejects if the wrapper exits first. */
  readonly serverPid: Promise<number>;
}

/**
 * Spawns `binary args…` behind the lifeline wrapper in a new process group (`detached: true`) with
 * exactly `env` as its environment. Guarantees: the server dies when this process dies, even by
 * SIGKILL (within `graceMs` plus 0.1 s of the pipe closing); nothing is passed in argv except `binary`
 * and `args`; the server's environment is exactly `env` (the shell's own `PWD` is removed). The wrapper's stderr carries the server's log output (the caller must consume it).
 */
export function spawnWithLifeline(
  binary: string,
  args: readonly string[],
  env: Record<string, string>,
  graceMs: number,
  cwd: string,
): LifelineChild {
  const ticks = String(Math.max(1, Math.ceil(graceMs / 100)));
  const wrapper = spawn('/bin/sh', ['-c', LIFELINE_SCRIPT, 'snotra-lifeline', ticks, binary, ...args], {
    detached: true,
    cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const pgid = wrapper.pid;
  if (pgid === undefined) {
    // spawn of /bin/sh failed synchronously (ENOENT/EAGAIN); the 'error' event carries the cause.
    const failed = new Promise<number>((_, reject) => wrapper.once('error', reject));
    failed.catch(() => {});
    return { wrapper, pgid: -1, serverPid: failed };
  }
  const serverPid = new Promise<number>((resolvePid, reject) => {
    let buf = '';
    const onData = (chunk: Buffer): void => {
      buf += chunk.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      wrapper.stdout?.off('data', onData);
      wrapper.stdout?.resume();
      const pid = Number(buf.slice(0, nl).trim());
      if (Number.isSafeInteger(pid) && pid > 0) resolvePid(pid);
      else reject(new Error('lifeline wrapper printed no server pid'));
    };
    wrapper.stdout?.on('data', onData);
    wrapper.once('exit', () => reject(new Error('lifeline wrapper exited before reporting the server pid')));
    wrapper.once('error', reject);
  });
  serverPid.catch(() => {});
  // Never written to: closing it is the signal. Errors on it (EPIPE after the wrapper died) are expected.
  wrapper.stdin?.on('error', () => {});
  return { wrapper, pgid, serverPid };
}
