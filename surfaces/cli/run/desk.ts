import type { GrantScope, RunFeedEvent, Runtime } from '../../../runtime/index.ts';
import { oneLine } from './escape.ts';
import { askApproval, askBudget, type ApprovalTerminal } from './prompt.ts';

type ApprovalRequested = Extract<RunFeedEvent, { type: 'approval.requested' }>;
type BudgetRequested = Extract<RunFeedEvent, { type: 'budget.requested' }>;
type DecideResult = ReturnType<Runtime['decide']>;

/** The decisions the desk may make, as a runtime client (embedded or joined) offers them. */
export interface Decider {
  decideAsync(
    approvalId: string,
    decision: 'approved' | 'denied',
    user: string,
    reason?: string,
  ): Promise<DecideResult>;
  approveWithGrant(approvalId: string, scope: GrantScope, user: string): DecideResult | Promise<DecideResult>;
}

/**
 * Asks attended approval requests on the terminal, one at a time in arrival order, and records
 * the answer as the local user. A request decided elsewhere meanwhile (`snotra inbox`) closes
 * its question; a decision that arrives too late changes nothing and says so.
 */
export class ApprovalDesk {
  #queue: Promise<void> = Promise.resolve();
  readonly #open = new Map<string, AbortController>();
  readonly #done = new Set<string>();
  #closed = false;

  constructor(
    private readonly term: ApprovalTerminal,
    private readonly decider: Decider,
    private readonly user: string,
  ) {}

  /** Queues a request to ask (a tool call's approval, or a budget request's "continue with +N?"). */
  ask(event: ApprovalRequested | BudgetRequested): void {
    const abort = new AbortController();
    this.#open.set(event.approvalId, abort);
    this.#queue = this.#queue.then(() => this.#ask(event, abort.signal));
  }

  /** The run is over: every open or queued question is dropped undecided (never denied for the human). */
  close(): void {
    this.#closed = true;
    for (const id of [...this.#open.keys()]) this.resolved(id);
  }

  /** A request was decided (here or elsewhere): its question, open or queued, is dropped. */
  resolved(approvalId: string): void {
    this.#done.add(approvalId);
    this.#open.get(approvalId)?.abort();
    this.#open.delete(approvalId);
  }

  async #ask(event: ApprovalRequested | BudgetRequested, signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.#done.has(event.approvalId)) return;
    if (event.type === 'budget.requested') return this.#askBudget(event, signal);
    const answer = await askApproval(this.term, event, signal);
    if (answer === null) {
      if (this.#closed) return;
      this.term.write(`  approval ${oneLine(event.approvalId, 200)} was decided elsewhere\n`);
      return;
    }
    let result: DecideResult;
    try {
      result =
        answer.kind === 'once'
          ? await this.decider.decideAsync(event.approvalId, 'approved', this.user)
          : answer.kind === 'deny'
            ? await this.decider.decideAsync(
                event.approvalId,
                'denied',
                this.user,
                answer.reason ?? undefined,
              )
            : await this.decider.approveWithGrant(event.approvalId, answer.kind, this.user);
    } catch (err) {
      // Fail closed: a grant that cannot be given leaves the request undecided, and says why.
      this.term.write(`  not recorded: ${oneLine((err as Error).message, 400)}\n`);
      return this.#ask(event, signal);
    }
    if (!result.ok) this.term.write(`  not recorded: ${oneLine(result.message, 400)}\n`);
  }

  async #askBudget(event: BudgetRequested, signal: AbortSignal): Promise<void> {
    const yes = await askBudget(this.term, event, signal);
    if (yes === null) {
      if (!this.#closed)
        this.term.write(`  budget request ${oneLine(event.approvalId, 200)} was decided elsewhere\n`);
      return;
    }
    const result = await this.decider.decideAsync(event.approvalId, yes ? 'approved' : 'denied', this.user);
    if (!result.ok) this.term.write(`  not recorded: ${oneLine(result.message, 400)}\n`);
  }
}
