/**
 * `snotra app`: the desktop shell. Generates the per-launch token, starts `snotra start` with the
 * token only in that child's environment, opens the web app in a Chromium app window whose /v1
 * requests get the token from the shell, and when the window closes (or the shell is
 * signalled) stops the runtime and its whole process tree. When a `snotra start` already runs on
 * the config's state dir, the shell joins it instead: its window opens on a single-use login URL
 * of that runtime, and closing it leaves the runtime running.
 */
import { randomBytes } from 'node:crypto';
import { resolveConfig } from '../../runtime/index.ts';
import { ClientError } from '../client/errors.ts';
import { askLoginUrl } from '../client/login.ts';
import { descendantsOf, endGroups } from './tree.ts';
import { startRuntimeChild, type RuntimeChild } from './runtime-child.ts';
import { chromiumPath, displayProblem, openWindow, type AppWindow } from './window.ts';

/** Set to `1` by tests only (with --headless): Chromium's DevTools on 127.0.0.1, printed in the ready line. */
export const DEVTOOLS_ENV = 'SNOTRA_APP_DEVTOOLS';

export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface AppOptions {
  readonly config: string | undefined;
  readonly headless: boolean;
  readonly cwd: string;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** How long `snotra start` may take to be ready. */
  readonly readyTimeoutMs?: number;
}

/** Runs the shell until the window closes or SIGINT/SIGTERM; resolves with the exit code. */
export async function runApp(o: AppOptions): Promise<number> {
  const env = o.env ?? process.env;
  const devtools = env[DEVTOOLS_ENV] === '1';
  if (devtools && !o.headless)
    throw new AppError('app_devtools_headless_only', `${DEVTOOLS_ENV}=1 is for tests and needs --headless`);
  // Before anything starts: no runtime is left behind for a browser that is not there.
  const executablePath = chromiumPath(env);
  const noDisplay = displayProblem(o.headless, env);
  if (noDisplay !== null) throw new AppError('app_no_display', noDisplay);
  const joined = await joinRunning(o);
  if (joined !== null) return runJoinedWindow(o, joined, executablePath, devtools);
  const token = randomBytes(32).toString('base64url');
  let stopRequested: (why: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => (stopRequested = resolve));
  const onSignal = (name: string) => () => stopRequested(name);
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  let runtime: RuntimeChild | null = null;
  let window: AppWindow | null = null;
  try {
    runtime = await startRuntimeChild({
      token,
      config: o.config,
      cwd: o.cwd,
      readyTimeoutMs: o.readyTimeoutMs ?? 60_000,
      stderr: o.stderr,
    });
    window = await openWindow({
      origin: runtime.sidecar,
      token,
      headless: o.headless,
      executablePath,
      devtools,
    });
    void window.closed.then(() => stopRequested('window closed'));
    void runtime.exited.then((how) => stopRequested(`runtime ended (${how})`));
    o.stdout(
      `${JSON.stringify({
        event: 'app.ready',
        pid: process.pid,
        runtimePid: runtime.pid,
        sidecar: runtime.sidecar,
        ...(window.devtools === null ? {} : { devtools: window.devtools }),
      })}\n`,
    );
    const why = await stopped;
    const failed = why.startsWith('runtime ended');
    if (failed) o.stderr(`snotra app: the runtime stopped unexpectedly: ${why}\n`);
    return failed ? 1 : 0;
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    await shutdown(window, runtime, o);
  }
}

/** Closes the window, then stops the runtime and anything of its tree that outlived it. */
async function shutdown(
  window: AppWindow | null,
  runtime: RuntimeChild | null,
  o: AppOptions,
): Promise<void> {
  await window?.close();
  if (runtime === null) return;
  const tree = await descendantsOf(runtime.pid);
  const how = await runtime.stop(15_000);
  const left = await endGroups([...tree, ...(await descendantsOf(runtime.pid))], 3000);
  if (left.length > 0) o.stderr(`snotra app: process groups ${left.join(', ')} could not be ended\n`);
  o.stdout(`${JSON.stringify({ event: 'app.stopped', runtime: how })}\n`);
}

/**
 * The login URL of the runtime already running on the config's state dir (`snotra start`), or
 * null when none runs (the shell then starts its own, as before).
 */
async function joinRunning(o: AppOptions): Promise<{ url: string; pid: number } | null> {
  const stateDir = resolveConfig(o.config, o.cwd).config.stateDir;
  try {
    return await askLoginUrl(stateDir);
  } catch (err) {
    if (err instanceof ClientError && err.code === 'not_running') return null;
    if (err instanceof ClientError) throw new AppError(err.code, err.message);
    throw err;
  }
}

/**
 * The window on a runtime this shell joined: opened on a single-use login URL (a cookie session
 * of that runtime's launch; this shell never holds its token). Closing the window or signalling
 * the shell closes the window only: the runtime belongs to its `snotra start`.
 */
async function runJoinedWindow(
  o: AppOptions,
  login: { url: string; pid: number },
  executablePath: string,
  devtools: boolean,
): Promise<number> {
  let stopRequested: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  process.on('SIGINT', stopRequested);
  process.on('SIGTERM', stopRequested);
  let window: AppWindow | null = null;
  try {
    const origin = new URL(login.url).origin;
    window = await openWindow({
      origin,
      token: null,
      entry: login.url,
      headless: o.headless,
      executablePath,
      devtools,
    });
    void window.closed.then(() => stopRequested());
    o.stdout(
      `${JSON.stringify({
        event: 'app.ready',
        pid: process.pid,
        runtimePid: login.pid,
        sidecar: origin,
        joined: true,
        ...(window.devtools === null ? {} : { devtools: window.devtools }),
      })}\n`,
    );
    await stopped;
    return 0;
  } finally {
    process.off('SIGINT', stopRequested);
    process.off('SIGTERM', stopRequested);
    await window?.close();
    o.stdout(`${JSON.stringify({ event: 'app.stopped', runtime: 'joined' })}\n`);
  }
}
