/**
 * `snotra start` as the desktop shell's child: the token only in its environment, its own
 * process group, its ready line read from stdout, its stderr passed through.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { signalGroup } from '../../runtime/index.ts';
import { packageFile } from '../cli/package-root.ts';

/**
 * The real CLI entry point (the same `snotra` the user runs), found from the package's folder:
 * this module runs from the sources and from `dist/`, at different depths.
 */
export const SNOTRA_BIN = packageFile('bin/snotra.js');

/** The runtime did not get to its ready line. */
export class RuntimeStartError extends Error {
  readonly code = 'app_runtime_failed';
}

export interface RuntimeChild {
  readonly pid: number;
  /** `http://127.0.0.1:<port>` from the ready line. */
  readonly sidecar: string;
  /** Resolves with the exit code (or signal) once the runtime has ended. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL to its group after `graceMs`; resolves once it has ended. */
  stop(graceMs: number): Promise<number | string>;
}

export interface RuntimeChildOptions {
  readonly token: string;
  readonly config: string | undefined;
  readonly cwd: string;
  readonly readyTimeoutMs: number;
  /** Where the runtime's stderr (its logs) goes. */
  readonly stderr: (text: string) => void;
}

/**
 * How the runtime is started on POSIX: `/bin/sh` with a lifeline (as runtime/processes/lifeline.ts
 * does for the runtime's own children). A watcher in the runtime's process group reads fd 3,
 * whose other end only this process holds; at end of file (this shell closed it, or died, SIGKILL
 * included) it sends SIGTERM to the group, waits for the runtime to end (at most the grace
 * period) and sends SIGKILL to what is left of the group, itself included. The token arrives
 * on fd 4 and is read by the shell itself after the watcher was forked, then exported into the
 * `exec`ed runtime only: it is in no argv and in no other process's environment.
 */
export const RUNTIME_WRAPPER = `
grace=$1; shift
(
  while read -r _; do :; done
  trap '' TERM
  kill -TERM 0 2>/dev/null
  i=0
  while kill -0 $$ 2>/dev/null && [ "$i" -lt "$((grace * 10))" ]; do sleep 0.1; i=$((i + 1)); done
  kill -KILL 0 2>/dev/null
) <&3 >/dev/null 2>&1 3<&- 4<&- &
IFS= read -r SNOTRA_SIDECAR_TOKEN <&4 || exit 70
export SNOTRA_SIDECAR_TOKEN
exec "$@" 3<&- 4<&-
`;

/** Seconds between the lifeline's SIGTERM and SIGKILL (the runtime stops gracefully well within it). */
export const LIFELINE_GRACE_SECONDS = 20;

export async function startRuntimeChild(options: RuntimeChildOptions): Promise<RuntimeChild> {
  const args = [SNOTRA_BIN, 'start', ...(options.config === undefined ? [] : ['--config', options.config])];
  const env = { ...process.env };
  delete env.SNOTRA_SIDECAR_TOKEN;
  const child: ChildProcess = spawn(
    '/bin/sh',
    ['-c', RUNTIME_WRAPPER, 'snotra-runtime', String(LIFELINE_GRACE_SECONDS), process.execPath, ...args],
    { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'], detached: true },
  );
  // fd 4: the token, once, then closed. fd 3 (the lifeline) stays open, unwritten, while this process lives.
  const tokenPipe = child.stdio[4] as NodeJS.WritableStream | null;
  tokenPipe?.end(`${options.token}\n`);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  child.stderr?.on('data', (d: Buffer) => options.stderr(d.toString('utf8')));
  const lines = createInterface({ input: child.stdout! });
  const pid = child.pid;
  // After the runtime ended, the lifeline has nothing left to guard.
  void exited.then(() => (child.stdio[3] as { destroy?: () => void } | null)?.destroy?.());
  const stop = async (graceMs: number) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => signalGroup(pid as number, 'SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return exited;
  };
  const sidecar = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new RuntimeStartError(`snotra start printed no ready line within ${options.readyTimeoutMs} ms`),
        ),
      options.readyTimeoutMs,
    );
    lines.on('line', (line) => {
      let ready: { event?: unknown; sidecar?: unknown };
      try {
        ready = JSON.parse(line) as typeof ready;
      } catch {
        return;
      }
      if (ready.event !== 'ready') return;
      clearTimeout(timer);
      if (typeof ready.sidecar === 'string' && /^http:\/\/127\.0\.0\.1:\d+$/.test(ready.sidecar))
        resolve(ready.sidecar);
      else
        reject(
          new RuntimeStartError(
            'the runtime started without its sidecar ("sidecar": null): the config has sidecar.enabled false, and the app needs it',
          ),
        );
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new RuntimeStartError(`snotra start ended (${how}) before it was ready; its errors are above`));
    });
  }).catch(async (err: unknown) => {
    await stop(5000);
    throw err;
  });
  if (pid === undefined) throw new RuntimeStartError('snotra start could not be started');
  return { pid, sidecar, exited, stop };
}
