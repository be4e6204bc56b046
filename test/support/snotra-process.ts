import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { eventually } from './runtime.ts';

/** The real CLI entry point. */
export const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;

/** A `snotra start` process: its output so far, its ready line, and its end. */
export interface StartedProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the parsed ready line; rejects when the process ends first or the deadline passes. */
  ready(timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or the signal name) once the process has ended. */
  exited: Promise<number | string>;
}

/** Starts `snotra <args>` (default `start --config F`) as a real child process. */
export function startSnotra(args: string[], env: NodeJS.ProcessEnv = {}): StartedProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, TZ: 'UTC', ...env },
  });
  let out = '';
  let err = '';
  let ended: number | string | null = null;
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = code ?? signal ?? 'unknown';
      resolve(ended);
    }),
  );
  return {
    child,
    pid: child.pid as number,
    stdout: () => out,
    stderr: () => err,
    exited,
    ready: async (timeoutMs = 90_000) => {
      const line = await eventually(
        () => {
          const l = out.split('\n').find((x) => x.includes('"event":"ready"'));
          if (l !== undefined) return l;
          if (ended !== null) throw new Error(`snotra exited (${ended}) before ready:\n${err}`);
          return undefined;
        },
        timeoutMs,
        'the ready line',
      );
      return JSON.parse(line) as Record<string, unknown>;
    },
  };
}

/** Waits for a process to end, SIGKILLing it after `timeoutMs`; resolves with how it ended. */
export async function stopProcess(p: StartedProcess, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000) {
  p.child.kill(signal);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
  try {
    return await p.exited;
  } finally {
    clearTimeout(timer);
  }
}
