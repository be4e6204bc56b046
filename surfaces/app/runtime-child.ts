/**
 * `snotra start` as the desktop shell's child: the token only in its environment, its own
 * process group, its ready line read from stdout, its stderr passed through.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { signalGroup } from '../../runtime/processes/index.ts';

/** The real CLI entry point (the same `snotra` the user runs). */
export const SNOTRA_BIN = fileURLToPath(new URL('../../bin/snotra.js', import.meta.url));

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

export async function startRuntimeChild(options: RuntimeChildOptions): Promise<RuntimeChild> {
  const args = [SNOTRA_BIN, 'start', ...(options.config === undefined ? [] : ['--config', options.config])];
  // The token is in this child's environment only: never argv, never this process's env.
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: { ...process.env, SNOTRA_SIDECAR_TOKEN: options.token },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  child.stderr?.on('data', (d: Buffer) => options.stderr(d.toString('utf8')));
  const lines = createInterface({ input: child.stdout! });
  const pid = child.pid;
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
