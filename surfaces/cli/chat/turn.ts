import type { Clock, RunFeedEvent } from '../../../runtime/index.ts';
import type { ChatRuntime } from '../../client/chat.ts';
import type { CliIo } from '../io.ts';
import { ApprovalDesk } from '../run/desk.ts';
import type { Paint } from '../run/paint.ts';
import type { ApprovalTerminal } from '../run/prompt.ts';
import { RunWatch } from '../run/watch.ts';
import type { CtrlC } from './ctrl-c.ts';
import type { Spinner } from './spinner.ts';

/** A second Ctrl-C within this time of the first exits the chat. */
export const EXIT_WINDOW_MS = 2000;

/** How a turn ended: the run ended, Ctrl-C interrupted it (saved, resumable), or a second Ctrl-C asks to exit. */
export type TurnEnd =
  | { readonly kind: 'ended'; readonly runId: string; readonly status: string }
  | { readonly kind: 'interrupted'; readonly runId: string }
  | { readonly kind: 'exit'; readonly runId: string | null };

/** What a turn needs from the chat. */
export interface TurnDeps {
  readonly rt: ChatRuntime;
  readonly io: CliIo;
  readonly paint: Paint;
  readonly spinner: Spinner;
  readonly clock: Clock;
  /** The chat's SIGINT listener: the turn holds it while it runs. */
  readonly ctrlC: CtrlC;
  /** The local user who decides approvals (`local:NAME`). */
  readonly user: string;
  /** When the last Ctrl-C came (clock time), shared with the prompt; updated here. */
  lastCtrlC: number | null;
  /** The chat's runs: each turn's run is added once it has an id. */
  readonly mine: Set<string>;
  /** Each run feed event while a turn runs (usage totals). */
  readonly onEvent: (event: RunFeedEvent) => void;
}

/** Events after which the model is thinking again: the spinner shows until it writes. */
const THINKING = new Set(['run.started', 'tool.completed', 'tool.denied', 'approval.resolved']);

/**
 * One turn of the chat: starts (or resumes) a run with `begin`, shows it as `snotra run` does
 * (streamed text, one line per tool call with its short result, inline approvals), with the
 * spinner while the model thinks. The first Ctrl-C interrupts the run (saved as it is, resumable
 * with /resume); a second within `EXIT_WINDOW_MS` asks the chat to exit.
 */
export async function runTurn(deps: TurnDeps, begin: () => Promise<string>): Promise<TurnEnd> {
  const { rt, io, paint, spinner, clock } = deps;
  let terminal: ApprovalTerminal | null | undefined;
  let desk: ApprovalDesk | null = null;
  const watch = new RunWatch(
    io,
    false,
    (event) => {
      spinner.stop();
      terminal ??= io.approvalTerminal?.() ?? null;
      if (terminal === null) return watch.waiting(event);
      desk ??= new ApprovalDesk(terminal, rt, deps.user);
      desk.ask(event);
    },
    paint,
  );
  watch.resolved.add((id) => desk?.resolved(id));
  let runId: string | null = null;
  let signalled: ((end: TurnEnd) => void) | null = null;
  const stopped = new Promise<TurnEnd>((resolve) => (signalled = resolve));
  let interruptWanted = false;
  const onSigint = (): void => {
    const now = clock.now();
    const again = deps.lastCtrlC !== null && now - deps.lastCtrlC < EXIT_WINDOW_MS;
    deps.lastCtrlC = now;
    if (again) return signalled?.({ kind: 'exit', runId });
    if (runId === null) interruptWanted = true;
    else {
      interrupt(runId);
      signalled?.({ kind: 'interrupted', runId });
    }
  };
  const interrupt = (id: string): void =>
    void rt
      .interrupt(id)
      .catch((err: unknown) =>
        io.stderr(`snotra chat: the interruption failed: ${(err as Error).message}\n`),
      );
  const off = rt.onRunEvent((event) => {
    deps.onEvent(event);
    watch.onEvent(event);
    if (runId !== null && event.runId === runId && THINKING.has(event.type)) spinner.start();
  });
  const release = deps.ctrlC.hold(onSigint);
  spinner.start();
  try {
    runId = await begin();
    deps.mine.add(runId);
    watch.follow(runId);
    if (interruptWanted) {
      interrupt(runId);
      return { kind: 'interrupted', runId };
    }
    const id = runId;
    const ended = rt
      .waitForRun(id)
      .then((outcome): TurnEnd => ({ kind: 'ended', runId: id, status: outcome.status }));
    // An interrupted run never ends while the chat waits; a joined runtime that stops later
    // rejects the wait, which nobody awaits any more.
    ended.catch(() => {});
    return await Promise.race([ended, stopped]);
  } finally {
    release();
    off();
    spinner.stop();
    // Questions still open are dropped, not answered: closing the terminal must not deny for the human.
    (desk as ApprovalDesk | null)?.close();
    terminal?.close();
    watch.endLine();
  }
}
