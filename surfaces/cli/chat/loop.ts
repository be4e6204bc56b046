import { userInfo } from 'node:os';
import {
  type Clock,
  type LoadedConfig,
  type RunFeedEvent,
  SessionBusyError,
} from '../../../runtime/index.ts';
import type { ChatRuntime } from '../../client/chat.ts';
import { ClientError } from '../../client/errors.ts';
import { ExitCode, type CliIo } from '../io.ts';
import { oneLine } from '../run/escape.ts';
import type { Paint } from '../run/paint.ts';
import type { CtrlC } from './ctrl-c.ts';
import { ChatHistory } from './history.ts';
import { readEntry } from './input.ts';
import { runSlash, type SlashContext } from './slash.ts';
import { Spinner } from './spinner.ts';
import { EXIT_WINDOW_MS, runTurn, type TurnDeps, type TurnEnd } from './turn.ts';

/** What the chat loop is given by `snotra chat`. */
export interface ChatOptions {
  /** The runtime the chat talks to: embedded in this process, or a running `snotra start` joined. */
  readonly rt: ChatRuntime;
  readonly loaded: LoadedConfig;
  readonly agent: string;
  /** The session to continue (`--session`, `--continue`); null for a new one. */
  readonly session: string | null;
  readonly io: CliIo;
  readonly paint: Paint;
  readonly clock: Clock;
  /** The chat's SIGINT listener (installed by `snotra chat` for the chat's whole life). */
  readonly ctrlC: CtrlC;
}

/**
 * The interactive chat: reads an entry (line history across chats, `\` for more lines), runs a
 * slash command or sends it to the agent in the session, and shows the turn (`runTurn`). Ends on
 * `/exit`, Ctrl-D, or a second Ctrl-C within 2 s; resolves with the exit code.
 */
export async function chatLoop(options: ChatOptions): Promise<number> {
  const { rt, loaded, agent, paint, clock, ctrlC } = options;
  const user = `local:${userInfo().username}`;
  const history = new ChatHistory(loaded.config.stateDir);
  const spinner = new Spinner((t) => void process.stderr.write(t), clock, paint);
  // Anything written stops the spinner first: its line is never mixed into the output.
  const io: CliIo = {
    ...options.io,
    stdout: (t) => {
      spinner.stop();
      options.io.stdout(t);
    },
    stderr: (t) => {
      spinner.stop();
      options.io.stderr(t);
    },
  };
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0, calls: 0 };
  /** The runs of this chat's turns and their sub-agents. */
  const mine = new Set<string>();
  const ctx: SlashContext = {
    rt,
    agent,
    user,
    paint,
    session: options.session,
    usage,
    say: (text) => io.stdout(`${text}\n`),
  };
  const turn: TurnDeps = {
    rt,
    io,
    paint,
    spinner,
    clock,
    ctrlC,
    user,
    lastCtrlC: null,
    mine,
    onEvent: (e: RunFeedEvent) => {
      // A joined runtime's feed carries every surface's runs: only this chat's are counted.
      if (!mine.has(e.runId)) {
        if (e.parentRunId === null || !mine.has(e.parentRunId)) return;
        mine.add(e.runId);
      }
      if (e.type !== 'model.usage') return;
      usage.calls++;
      usage.inputTokens += e.inputTokens;
      usage.outputTokens += e.outputTokens;
      usage.costUsd += e.costUsd ?? 0;
    },
  };
  /** The run Ctrl-C interrupted: /resume goes on with it; a new message ends it first. */
  let interrupted: string | null = null;
  const where = options.session === null ? 'a new session' : `session ${oneLine(options.session, 200)}`;
  const joined =
    rt.kind === 'joined' ? ` Joined the running runtime (pid ${rt.pid}); it goes on when you leave.` : '';
  ctx.say(
    `${paint.bold('snotra chat')} with ${oneLine(agent, 80)}, ${where}.${joined} ${paint.dim('/help for commands, Ctrl-C interrupts, Ctrl-D or /exit quits.')}`,
  );

  const after = (end: TurnEnd): boolean => {
    if (end.kind === 'exit') return true;
    if (end.kind === 'interrupted') {
      interrupted = end.runId;
      ctx.say(
        paint.yellow(
          `interrupted; the run is saved: /resume goes on with it (or later: snotra run --resume ${oneLine(end.runId, 200)}); a new message starts over`,
        ),
      );
    } else if (end.runId === interrupted) interrupted = null;
    return false;
  };

  /** Whether Ctrl-C came twice while a slash command ran (it ends before the chat exits). */
  let exitAsked = false;
  /** A Ctrl-C: true when it is the second within the window (the chat exits). */
  const ctrlCAgain = (): boolean => {
    const now = clock.now();
    if (turn.lastCtrlC !== null && now - turn.lastCtrlC < EXIT_WINDOW_MS) return true;
    turn.lastCtrlC = now;
    ctx.say(paint.dim('(Ctrl-C again to exit, or /exit)'));
    return false;
  };
  ctrlC.otherwise(() => {
    if (ctrlCAgain()) exitAsked = true;
  });
  for (;;) {
    if (exitAsked) return 0;
    const input = await readEntry(history.newestFirst(), paint, ctrlC, rt.gone);
    if (input.kind === 'eof') return 0;
    if (input.kind === 'gone') {
      // The joined runtime stopped while the chat waited for input: said at once, not at the next send.
      const why = input.reason instanceof Error ? input.reason.message : 'the running runtime stopped';
      io.stderr(`snotra chat: ${oneLine(why, 1000)}\n`);
      return ExitCode.failure;
    }
    if (input.kind === 'interrupt') {
      if (ctrlCAgain()) return 0;
      continue;
    }
    // An entry ends a Ctrl-C pair: the next Ctrl-C is a first one again.
    turn.lastCtrlC = null;
    const text = input.text.trim();
    if (text.length === 0) continue;
    history.add(input.text);
    try {
      if (text.startsWith('/')) {
        const outcome = await runSlash(ctx, text);
        if (outcome === 'exit') return 0;
        if (outcome === 'resume') {
          const runId = interrupted;
          if (runId === null) {
            ctx.say('nothing to resume: no turn was interrupted in this chat');
            continue;
          }
          const end = await runTurn(turn, async () => {
            if (!(await rt.resume(runId))) throw new Error(`run ${runId} has nothing left to resume`);
            return runId;
          });
          if (after(end)) return 0;
        }
        continue;
      }
      if (interrupted !== null) {
        const old = interrupted;
        interrupted = null;
        if (await rt.cancel(old, 'the user sent a new message')) await rt.waitForRun(old);
      }
      const end = await runTurn(turn, async () => {
        const sent = await rt.submit(agent, text, ctx.session);
        ctx.session = sent.session;
        return sent.runId;
      });
      if (after(end)) return 0;
    } catch (err) {
      const busy =
        err instanceof SessionBusyError || (err instanceof ClientError && err.code === 'session_busy');
      const message = busy
        ? `${(err as Error).message} (wait for it, or /session new)`
        : ((err as Error).message ?? String(err));
      io.stderr(`snotra chat: ${oneLine(message, 1000)}\n`);
      // The joined runtime stopped: nothing more can be sent; its runs were saved by it.
      if (err instanceof ClientError && err.code === 'runtime_gone') return ExitCode.failure;
    }
  }
}
