import { checkSessionName, type LoadedConfig, resolveConfig, type RunOutcome } from '../../runtime/index.ts';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { ClientError, openRuntimeClient, type RuntimeClient } from '../client/connect.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { ApprovalDesk } from './run/desk.ts';
import { pickAgent } from './run/pick-agent.ts';
import { readableLogs, warningsTo } from './run/warnings.ts';
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
  /** `--agent`, checked against the agents of the runtime the run goes to. */
  readonly agent: string | undefined;
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
  const raw = positionals[0];
  const message = raw === '-' ? await readMessage(io) : raw;
  if (message !== undefined && message.trim().length === 0) throw new UsageError('the message is empty');
  return {
    loaded,
    json: values.json,
    unattended: values.unattended,
    agent: values.agent,
    session: values.session,
    continue: values.continue,
    resume: values.resume,
    message,
  };
}

function exitOf(outcome: RunOutcome): number {
  return outcome.status === 'completed' ? ExitCode.ok : ExitCode.failure;
}

/**
 * `snotra run`: one headless run on the config's state dir. Joins the runtime running there
 * (`snotra start`), or, when none runs, starts one in this process for the run's duration
 * (surfaces/client). Streams the run (text, or JSON lines with `--json`), asks attended
 * approvals on the terminal (or waits for `snotra inbox` without one), and exits 0 completed,
 * 1 failed or denied, 20 parked (`--unattended`). `--resume RUN` finishes a parked run whose
 * approval was decided meanwhile.
 */
export async function runCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const args = await parse(argv, io, cwd);
  if (args.resume !== undefined) {
    // Loaded only for --resume: the store's readers (a joining run never opens the database).
    const { precheckResume } = await import('./run/resume-check.ts');
    const early = precheckResume(args.loaded.config.stateDir, args.json, io, args.resume);
    if (early !== null) return early;
  }
  const user = `local:${userInfo().username}`;
  let terminal: ApprovalTerminal | null | undefined;
  let desk: ApprovalDesk | null = null;
  let client: RuntimeClient | null = null;
  const watch = new RunWatch(io, args.json, (event) => {
    terminal ??= io.approvalTerminal?.() ?? null;
    if (terminal === null || client === null) {
      watch.waiting(event);
      return;
    }
    desk ??= new ApprovalDesk(terminal, client, user);
    desk.ask(event);
  });
  watch.resolved.add((id) => desk?.resolved(id));
  try {
    client = await openRuntimeClient({
      loaded: args.loaded,
      onRunEvent: (e) => watch.onEvent(e),
      logDestination: warningsTo(io, readableLogs(args.json), 'snotra run'),
    });
  } catch (err) {
    throw failureOf(err);
  }
  const rt = client;
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
    let runId = args.resume;
    if (runId === undefined) {
      const where =
        rt.kind === 'joined'
          ? `the running runtime (pid ${rt.pid})`
          : (args.loaded.file ?? 'the default config');
      runId = await rt.submit({
        agent: pickAgent(rt.agents, where, args.agent),
        text: args.message as string,
        ...(args.session === undefined ? {} : { session: args.session }),
        ...(args.continue ? { continue: true } : {}),
        unattended: args.unattended,
      });
    }
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
    io.stderr(
      rt.kind === 'joined'
        ? `snotra run: interrupted; the run goes on in the running runtime (pid ${rt.pid}): snotra run --resume ${oneLine(runId, 200)} follows it again\n`
        : `snotra run: interrupted; the run is saved: snotra run --resume ${oneLine(runId, 200)}\n`,
    );
    return ExitCode.failure;
  } catch (err) {
    throw failureOf(err);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // Questions still open are dropped, not answered: closing the terminal must not deny for the human.
    (desk as ApprovalDesk | null)?.close();
    terminal?.close();
    await rt.close();
    process.off('SIGINT', hardExit);
  }
}

/** A client's refusal as the command's failure (its code and sentence); anything else as it is. */
function failureOf(err: unknown): unknown {
  return err instanceof ClientError ? new CommandFailure(err.code, err.message) : err;
}
