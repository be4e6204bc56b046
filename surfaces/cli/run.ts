import { checkSessionName, type LoadedConfig, resolveConfig, type RunOutcome } from '../../runtime/index.ts';
import { userInfo } from 'node:os';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { ClientError, openRuntimeClient, type RuntimeClient } from '../client/connect.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { ApprovalDesk } from './run/desk.ts';
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

function pickAgent(agents: readonly string[], where: string, wanted: string | undefined): string {
  if (wanted !== undefined) {
    if (!agents.includes(wanted))
      throw new UsageError(
        `--agent ${JSON.stringify(wanted)} is not an agent of ${where}; agents: ${agents.join(', ') || '(none)'}`,
      );
    return wanted;
  }
  if (agents.length === 1) return agents[0] as string;
  throw new UsageError(
    agents.length === 0
      ? `${where} defines no agents (add one under "agents")`
      : `${where} has several agents; pick one with --agent (${agents.join(', ')})`,
  );
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

/** Log messages of a run's end: the feed already says how the followed run ended, and why. */
const RUN_END_MESSAGES = new Set(['run denied', 'run failed']);

/**
 * The runtime's log (redacted JSON lines) on stderr, warnings and errors only: the run's own
 * output is the feed, so a run's end is not said twice. On a terminal a warning is one readable
 * line (`snotra run: warning: MESSAGE (key=value …)`); piped, or with `--json`, it stays the JSON
 * line (`SNOTRA_LOG_FORMAT=json` keeps JSON on a terminal too).
 */
function warningsTo(io: CliIo, readable: boolean): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) {
        if (line.length === 0) continue;
        let entry: Record<string, unknown> | null = null;
        try {
          const parsed = JSON.parse(line) as unknown;
          if (typeof parsed === 'object' && parsed !== null) entry = parsed as Record<string, unknown>;
        } catch {
          // Not JSON: shown as it is.
        }
        if (entry === null) {
          io.stderr(`${line}\n`);
          continue;
        }
        const level = Number(entry.level ?? 50);
        if (level < 40 || RUN_END_MESSAGES.has(String(entry.msg))) continue;
        io.stderr(readable ? `${readableWarning(entry, level)}\n` : `${line}\n`);
      }
      cb();
    },
  });
}

/** A log entry as one line for a person: its message, then its fields (no time, pid or level number). */
function readableWarning(entry: Record<string, unknown>, level: number): string {
  const fields = Object.entries(entry)
    .filter(([k]) => !['level', 'time', 'pid', 'hostname', 'msg', 'v'].includes(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const what = level >= 50 ? 'error' : 'warning';
  return oneLine(
    `snotra run: ${what}: ${String(entry.msg ?? '')}${fields.length > 0 ? ` (${fields.join(' ')})` : ''}`,
    2000,
  );
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
      logDestination: warningsTo(
        io,
        process.stderr.isTTY === true && !args.json && process.env.SNOTRA_LOG_FORMAT !== 'json',
      ),
    });
  } catch (err) {
    throw failureOf(err);
  }
  const rt = client;
  // The signal is kept from the moment it is caught: one that arrives while the run is still
  // being submitted interrupts it as soon as the run has an id (it was lost before).
  let onSignal = (): void => {};
  const interruption = new Promise<{ kind: 'interrupted' }>(
    (resolve) => (onSignal = () => resolve({ kind: 'interrupted' })),
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
  }
}

/** A client's refusal as the command's failure (its code and sentence); anything else as it is. */
function failureOf(err: unknown): unknown {
  return err instanceof ClientError ? new CommandFailure(err.code, err.message) : err;
}
