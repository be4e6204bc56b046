import { createInterface } from 'node:readline';
import type { RunFeedEvent } from '../../../runtime/index.ts';
import { stripUnsafe } from './escape.ts';
import { approvalCard, budgetQuestion, choicesLine } from './render.ts';

type ApprovalRequested = Extract<RunFeedEvent, { type: 'approval.requested' }>;
type BudgetRequested = Extract<RunFeedEvent, { type: 'budget.requested' }>;

/** The terminal an attended run asks its approvals on. */
export interface ApprovalTerminal {
  write(text: string): void;
  /** Reads one answer line; null on end of input, an input error, Ctrl-C or `signal`. */
  ask(question: string, signal: AbortSignal): Promise<string | null>;
  close(): void;
}

/** What the human answered. */
export type ApprovalAnswer =
  | { readonly kind: 'once' }
  | { readonly kind: 'session' }
  | { readonly kind: 'standing' }
  | { readonly kind: 'deny'; readonly reason: string | null };

/** The longest deny reason passed on (the store's limit). */
export const REASON_MAX = 1000;

/** Parses one answer; null when it is not one of the offered choices. */
export function parseAnswer(
  text: string,
  options: ApprovalRequested['options'],
): ApprovalAnswer['kind'] | null {
  const a = text.trim().toLowerCase();
  if (a === 'o' || a === 'once' || a === 'y' || a === 'yes') return 'once';
  if ((a === 's' || a === 'session') && options.session) return 'session';
  if ((a === 'a' || a === 'always') && options.standing) return 'standing';
  if (a === 'd' || a === 'deny' || a === 'n' || a === 'no') return 'deny';
  return null;
}

/** A deny reason as typed: control characters removed, trimmed, capped; null when empty. */
export function cleanReason(text: string | null): string | null {
  if (text === null) return null;
  const clean = stripUnsafe(text)
    .replace(/[\n\t]/g, ' ')
    .trim();
  return clean.length === 0 ? null : clean.slice(0, REASON_MAX);
}

const MAX_TRIES = 3;

/**
 * Shows the approval card and asks until a valid answer (fail closed: end of input, an input
 * error, Ctrl-C or three invalid answers deny). A deny asks for an optional reason for the
 * model. Returns null when `signal` aborted the question (the request was decided elsewhere).
 */
export async function askApproval(
  term: ApprovalTerminal,
  event: ApprovalRequested,
  signal: AbortSignal,
): Promise<ApprovalAnswer | null> {
  term.write(approvalCard(event));
  for (let i = 0; i < MAX_TRIES; i++) {
    const line = await term.ask(choicesLine(event), signal);
    if (signal.aborted) return null;
    if (line === null) return { kind: 'deny', reason: null };
    const kind = parseAnswer(line, event.options);
    if (kind === 'deny') {
      const reason = await term.ask('  reason for the model (optional, Enter to skip): ', signal);
      if (signal.aborted) return null;
      return { kind: 'deny', reason: cleanReason(reason) };
    }
    if (kind !== null) return { kind };
    term.write('  not an offered answer\n');
  }
  return { kind: 'deny', reason: null };
}

/**
 * Asks "continue with +N?" for a budget request: yes extends the run's budget once; no, end of
 * input, Ctrl-C or three invalid answers decline it (fail closed). Null when `signal` aborted the
 * question (decided elsewhere).
 */
export async function askBudget(
  term: ApprovalTerminal,
  event: BudgetRequested,
  signal: AbortSignal,
): Promise<boolean | null> {
  for (let i = 0; i < MAX_TRIES; i++) {
    const line = await term.ask(budgetQuestion(event), signal);
    if (signal.aborted) return null;
    if (line === null) return false;
    const a = line.trim().toLowerCase();
    if (a === 'y' || a === 'yes') return true;
    if (a === 'n' || a === 'no') return false;
    term.write('  not an offered answer\n');
  }
  return false;
}

/** The process's terminal (stdin for answers, stderr for the questions), opened on first use. */
export function processTerminal(): ApprovalTerminal {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  let closed = false;
  let interrupt: (() => void) | null = null;
  rl.on('close', () => {
    closed = true;
    interrupt?.();
  });
  // While readline holds the terminal (raw mode, from the first question until it is closed),
  // Ctrl-C reaches this process as a key, not as a signal. During a question it denies (fail
  // closed); between questions it is passed on as the SIGINT it would have been, so Ctrl-C
  // still interrupts a run after an inline approval (it did nothing there).
  rl.on('SIGINT', () => {
    if (interrupt !== null) interrupt();
    else process.kill(process.pid, 'SIGINT');
  });
  process.stdin.on('error', () => interrupt?.());
  return {
    write: (text) => void process.stderr.write(text),
    ask: (question, signal) =>
      new Promise((resolve) => {
        if (closed || signal.aborted) return resolve(null);
        const finish = (value: string | null) => {
          rl.off('line', onLine);
          signal.removeEventListener('abort', onAbort);
          interrupt = null;
          resolve(value);
        };
        const onLine = (l: string) => finish(l);
        const onAbort = () => {
          process.stderr.write('\n');
          finish(null);
        };
        interrupt = () => finish(null);
        rl.on('line', onLine);
        signal.addEventListener('abort', onAbort);
        rl.setPrompt(question);
        rl.prompt();
      }),
    close: () => {
      if (!closed) rl.close();
    },
  };
}
