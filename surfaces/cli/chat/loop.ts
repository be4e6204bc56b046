import { userInfo } from 'node:os';
import {
  type Clock,
  type LoadedConfig,
  type RunFeedEvent,
  type Runtime,
  SessionBusyError,
} from '../../../runtime/index.ts';
import type { CliIo } from '../io.ts';
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
  readonly rt: Runtime;
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
  const ctx: SlashContext = {
    rt,
    loaded,
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
    onEvent: (e: RunFeedEvent) => {
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
  ctx.say(
    `${paint.bold('snotra chat')} with ${oneLine(agent, 80)}, ${where}. ${paint.dim('/help for commands, Ctrl-C interrupts, Ctrl-D or /exit quits.')}`,
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
    const input = await readEntry(history.newestFirst(), paint, ctrlC);
    if (input.kind === 'eof') return 0;
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
            if (!rt.runs.resume(runId)) throw new Error(`run ${runId} has nothing left to resume`);
            return runId;
          });
          if (after(end)) return 0;
        }
        continue;
      }
      if (interrupted !== null) {
        const old = interrupted;
        interrupted = null;
        if (rt.runs.cancel(old, 'the user sent a new message')) await rt.waitForRun(old);
      }
      const end = await runTurn(turn, async () => {
        ctx.session ??= rt.sessions.create(agent, 'chat').sessionId;
        const session = ctx.session;
        return rt.runs.submit(agent, text, { sessionId: session, taskId: session, surface: 'chat' });
      });
      if (after(end)) return 0;
    } catch (err) {
      const message =
        err instanceof SessionBusyError
          ? `${err.message} (wait for it, or /session new)`
          : ((err as Error).message ?? String(err));
      io.stderr(`snotra chat: ${oneLine(message, 1000)}\n`);
    }
  }
}
