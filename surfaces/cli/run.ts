import {
  checkSessionName,
  listPending,
  type LoadedConfig,
  resolveConfig,
  type Runtime,
  showRun,
} from '../../runtime/index.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { ApprovalDesk } from './run/desk.ts';
import { openRuntime } from './run/open-runtime.ts';
import { pickAgent } from './run/pick-agent.ts';
import { oneLine } from './run/escape.ts';
import type { ApprovalTerminal } from './run/prompt.ts';
import { RunWatch } from './run/watch.ts';

const USAGE =
  'usage: snotra run [--config F] [--agent A] [--json] [--unattended] [--session S | --continue] MESSAGE|-\n' +
  '       snotra run --resume RUN [--config F] [--json]\n' +
  '  exit 0 completed, 1 failed or denied, 20 parked (unattended), 2 usage';

/** The longest message read from stdin (`-`), as the bus accepts it. */
const MESSAGE_MAX = 100_000;

interface RunArgs {
  readonly loaded: LoadedConfig;
  readonly json: boolean;
  readonly unattended: boolean;
  readonly agent: string;
  readonly session: string | undefined;
  /** `--continue`: the workspace's most recent session. */
  readonly continue: boolean;
  readonly resume: string | undefined;
  readonly message: string | undefined;
}

async function readMessage(io: CliIo): Promise<string> {
  const lines: string[] = [];
  let size = 0;
  for await (const line of io.stdinLines()) {
    size += line.length + 1;
    if (size > MESSAGE_MAX)
      throw new UsageError(`the message on stdin is longer than ${MESSAGE_MAX} characters`);
    lines.push(line);
  }
  const text = lines.join('\n').trim();
  if (text.length === 0) throw new UsageError('the message on stdin is empty');
  return text;
}

async function parse(argv: string[], io: CliIo, cwd: string): Promise<RunArgs> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        agent: { type: 'string' },
        json: { type: 'boolean', default: false },
        unattended: { type: 'boolean', default: false },
        session: { type: 'string' },
        continue: { type: 'boolean', default: false },
        resume: { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.resume !== undefined) {
    if (
      positionals.length > 0 ||
      values.agent !== undefined ||
      values.session !== undefined ||
      values.continue ||
      values.unattended
    )
      throw new UsageError(
        `--resume takes no message, --agent, --session, --continue or --unattended\n${USAGE}`,
      );
  } else if (positionals.length !== 1) {
    throw new UsageError(
      `${positionals.length === 0 ? 'a message is needed' : 'give the message as one argument (quote it)'}\n${USAGE}`,
    );
  }
  if (values.session !== undefined && values.continue)
    throw new UsageError(`give --session S or --continue, not both\n${USAGE}`);
  if (values.session !== undefined) {
    try {
      checkSessionName(values.session, '--session');
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const loaded = resolveConfig(values.config, cwd);
  const agent = values.resume !== undefined ? '' : pickAgent(loaded, values.agent);
  const raw = positionals[0];
  const message = raw === '-' ? await readMessage(io) : raw;
  if (message !== undefined && message.trim().length === 0) throw new UsageError('the message is empty');
  return {
    loaded,
    json: values.json,
    unattended: values.unattended,
    agent,
    session: values.session,
    continue: values.continue,
    resume: values.resume,
    message,
  };
}

function exitOf(outcome: Awaited<ReturnType<Runtime['waitForRun']>>): number {
  return outcome.status === 'completed' ? ExitCode.ok : ExitCode.failure;
}

/**
 * Checks a run named by `--resume` before a runtime starts on its state dir: unknown runs fail,
 * a run still waiting on an undecided approval stays parked (exit 20 with the Inbox id). Returns
 * null when the run should be resumed.
 */
function precheckResume(args: RunArgs, io: CliIo, runId: string): number | null {
  const stateDir = args.loaded.config.stateDir;
  const run = existsSync(join(stateDir, 'snotra.db')) ? showRun(stateDir, runId) : null;
  if (run === null)
    throw new CommandFailure('not_found', `no run ${JSON.stringify(oneLine(runId, 200))} in ${stateDir}`);
  if (run.summary.status !== 'waiting_for_approval') return null;
  const pending = listPending(stateDir).find((a) => a.runId === runId);
  if (pending === undefined) return null;
  const text = `run ${runId} still waits for approval ${pending.id}: decide with \`snotra inbox approve|deny ${pending.id}\``;
  io[args.json ? 'stderr' : 'stdout'](`${oneLine(text, 1000)}\n`);
  if (args.json)
    io.stdout(`${JSON.stringify({ type: 'run.parked', runId, ts: Date.now(), approvalId: pending.id })}\n`);
  return ExitCode.parked;
}

/** `--continue`: the id of this workspace's most recent session (a failure when there is none). */
function continued(rt: Runtime, loaded: LoadedConfig): string {
  const latest = rt.sessions.latest();
  if (latest === null) {
    const root = loaded.config.workspace.roots.find((r) => r.primary) ?? loaded.config.workspace.roots[0];
    throw new CommandFailure(
      'session_not_found',
      `--continue: no conversation yet in this workspace (${oneLine(root?.path ?? '?', 300)}); start one with \`snotra run MESSAGE\``,
    );
  }
  return latest.sessionId;
}

/**
 * `snotra run`: one headless run on the config's state dir. Starts the runtime in this process
 * for the run's duration, streams the run (text, or JSON lines with `--json`), asks attended
 * approvals on the terminal (or waits for `snotra inbox` without one), and exits 0 completed,
 * 1 failed or denied, 20 parked (`--unattended`). `--resume RUN` finishes a parked run whose
 * approval was decided meanwhile.
 */
export async function runCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const args = await parse(argv, io, cwd);
  if (args.resume !== undefined) {
    const early = precheckResume(args, io, args.resume);
    if (early !== null) return early;
  }
  const user = `local:${userInfo().username}`;
  let terminal: ApprovalTerminal | null | undefined;
  let desk: ApprovalDesk | null = null;
  let runtime: Runtime | null = null;
  const watch = new RunWatch(io, args.json, (event) => {
    terminal ??= io.approvalTerminal?.() ?? null;
    if (terminal === null || runtime === null) {
      watch.waiting(event);
      return;
    }
    desk ??= new ApprovalDesk(terminal, runtime, user);
    desk.ask(event);
  });
  watch.resolved.add((id) => desk?.resolved(id));
  runtime = await openRuntime({
    loaded: args.loaded,
    io,
    json: args.json,
    who: 'snotra run',
    onRunEvent: (e) => watch.onEvent(e),
  });
  const rt = runtime;
  // The signal is kept from the moment it is caught: one that arrives while the run is still
  // being submitted interrupts it as soon as the run has an id (it was lost before).
  let onSignal = (): void => {};
  // A second Ctrl-C while the run is being saved ends the process at once.
  const hardExit = (): never => process.exit(130);
  const interruption = new Promise<{ kind: 'interrupted' }>(
    (resolve) =>
      (onSignal = () => {
        process.once('SIGINT', hardExit);
        resolve({ kind: 'interrupted' });
      }),
  );
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const session = args.continue ? continued(rt, args.loaded) : args.session;
    const runId =
      args.resume ??
      (await rt.submit(args.agent, args.message as string, {
        ...(session !== undefined ? { sessionId: session, taskId: session } : {}),
        interaction: args.unattended ? 'unattended' : 'attended',
        surface: 'cli',
      }));
    watch.follow(runId);
    const ended = await Promise.race([
      rt.waitForRun(runId).then((outcome) => ({ kind: 'ended' as const, outcome })),
      watch.parked.then((approvalId) => ({ kind: 'parked' as const, approvalId })),
      interruption,
    ]);
    watch.endLine();
    if (ended.kind === 'ended') return exitOf(ended.outcome);
    if (ended.kind === 'parked') {
      if (!args.json) io.stdout(`${oneLine(ended.approvalId, 200)}\n`);
      return ExitCode.parked;
    }
    io.stderr(`snotra run: interrupted; the run is saved: snotra run --resume ${oneLine(runId, 200)}\n`);
    return ExitCode.failure;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // Questions still open are dropped, not answered: closing the terminal must not deny for the human.
    (desk as ApprovalDesk | null)?.close();
    terminal?.close();
    await rt.stop();
    process.off('SIGINT', hardExit);
  }
}
