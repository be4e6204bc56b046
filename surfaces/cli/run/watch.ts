import type { RunFeedEvent } from '../../../runtime/index.ts';
import type { CliIo } from '../io.ts';
import { escapeForTerminal, oneLine } from './escape.ts';
import { plain, type Paint } from './paint.ts';
import { decidedLine, waitingLine } from './render.ts';
import { resultLines } from './result-line.ts';

type ApprovalRequested = Extract<RunFeedEvent, { type: 'approval.requested' }>;
type BudgetRequested = Extract<RunFeedEvent, { type: 'budget.requested' }>;

/**
 * What the watch does with an approval or budget request of its run (attended: ask; else print
 * how to decide).
 */
export type ApprovalHandler = (event: ApprovalRequested | BudgetRequested) => void;

/**
 * Follows one run and the sub-agent runs it spawns in the runtime's feed: events that arrive
 * before the run id is known are held, then the run's tree is kept and everything else dropped.
 * It writes each event as a JSON line (`--json`) or as text (the assistant's text on stdout,
 * one line per tool call), hands attended approval requests to `onApproval`, and resolves
 * `parked` when an unattended run of the tree parks.
 */
export class RunWatch {
  readonly #tree = new Set<string>();
  #held: RunFeedEvent[] | null = [];
  readonly #args = new Map<string, unknown>();
  /** The diff an approval card showed for a call (its short result counts the lines from it). */
  readonly #diffs = new Map<string, string>();
  #atLineStart = true;
  /** Runs whose current step's text was shown as it streamed (its `model.text` is not shown again). */
  readonly #streamed = new Set<string>();
  #parked: (approvalId: string) => void = () => {};
  /** Resolves with the approval id when a run of the tree parks. */
  readonly parked = new Promise<string>((resolve) => (this.#parked = resolve));
  /** Listeners of approval resolutions (an open prompt closes when decided elsewhere). */
  readonly resolved = new Set<(approvalId: string, event: RunFeedEvent) => void>();

  constructor(
    private readonly io: CliIo,
    private readonly json: boolean,
    private readonly onApproval: ApprovalHandler,
    private readonly paint: Paint = plain,
  ) {}

  /** The run to follow; held events of its tree are handled now. */
  follow(runId: string): void {
    this.#tree.add(runId);
    const held = this.#held ?? [];
    this.#held = null;
    for (const e of held) this.onEvent(e);
  }

  /** The feed listener. */
  onEvent(event: RunFeedEvent): void {
    if (this.#held !== null) {
      this.#held.push(event);
      return;
    }
    if (!this.#tree.has(event.runId)) {
      if (event.parentRunId === null || !this.#tree.has(event.parentRunId)) return;
      this.#tree.add(event.runId);
    }
    if (this.json) this.io.stdout(`${JSON.stringify(event)}\n`);
    else this.#text(event);
    if (event.type === 'approval.requested' || event.type === 'budget.requested') {
      if (event.interaction === 'attended') this.onApproval(event);
    } else if (event.type === 'approval.resolved') {
      for (const l of this.resolved) l(event.approvalId, event);
    } else if (event.type === 'run.parked') {
      this.#parked(event.approvalId);
    }
  }

  /** Ends the current line of streamed text, if any. */
  endLine(): void {
    if (!this.#atLineStart) this.io.stdout('\n');
    this.#atLineStart = true;
  }

  #line(text: string): void {
    this.endLine();
    this.io.stdout(text);
  }

  #text(e: RunFeedEvent): void {
    const sub = e.parentRunId === null ? '' : `[${oneLine(e.agentId, 40)}] `;
    switch (e.type) {
      case 'model.delta': {
        const text = escapeForTerminal(e.delta, true);
        this.io.stdout((this.#streamed.has(e.runId) ? '' : sub) + text);
        this.#streamed.add(e.runId);
        this.#atLineStart = text.endsWith('\n');
        return;
      }
      case 'model.text': {
        if (this.#streamed.delete(e.runId)) return;
        const text = escapeForTerminal(e.delta, true);
        this.io.stdout(sub + text);
        this.#atLineStart = text.endsWith('\n');
        return;
      }
      case 'tool.proposed':
        this.#args.set(`${e.runId}\u0000${e.callId}`, e.args);
        return;
      case 'tool.decided': {
        const line = decidedLine(e, this.#args.get(`${e.runId}\u0000${e.callId}`));
        const d = e.decision.decision;
        const paint = d === 'allow' ? this.paint.green : d === 'deny' ? this.paint.red : this.paint.yellow;
        this.#line(sub + (this.paint.on ? `${paint('▸')}${line.slice(1)}` : line));
        return;
      }
      case 'tool.completed': {
        const key = `${e.runId}\u0000${e.callId}`;
        const lines = resultLines({
          tool: e.tool,
          args: this.#args.get(key),
          ok: e.ok,
          content: e.content,
          diff: this.#diffs.get(key) ?? null,
        });
        this.#args.delete(key);
        this.#diffs.delete(key);
        if (lines !== null) {
          const [head = '', ...rest] = lines;
          const mark = e.ok ? this.paint.green : this.paint.red;
          const body = rest.map((l) => `${sub}${this.paint.dim(l)}\n`).join('');
          this.#line(
            `${sub}${head.replace(/^( {2})([✓✗])/, (_m, sp: string, g: string) => sp + mark(g))}\n${body}`,
          );
        } else if (!e.ok)
          this.#line(
            `${sub}  ${this.paint.red('✗')} ${oneLine(e.tool, 80)} failed: ${oneLine(e.content, 300)}\n`,
          );
        return;
      }
      case 'tool.denied':
        this.#line(
          `${sub}  ✗ ${oneLine(e.tool, 80)} denied (${oneLine(e.reason, 60)}): ${oneLine(e.message, 300)}\n`,
        );
        return;
      case 'approval.requested':
        if (e.preview?.kind === 'diff' && e.preview.diff !== null)
          this.#diffs.set(`${e.runId}\u0000${e.callId}`, e.preview.diff);
        if (e.interaction === 'unattended')
          this.#line(`${sub}approval ${oneLine(e.approvalId, 200)} is in the Inbox\n`);
        return;
      case 'budget.requested':
        if (e.interaction === 'unattended')
          this.#line(
            `${sub}budget request ${oneLine(e.approvalId, 200)} (${oneLine(e.dimension, 40)} +${e.grant}) is in the Inbox\n`,
          );
        return;
      case 'approval.resolved':
        this.#line(
          `${sub}  approval ${e.decision}${e.by === null ? '' : ` by ${oneLine(e.by, 80)}`}${e.reason === null ? '' : `: ${oneLine(e.reason, 300)}`}\n`,
        );
        return;
      case 'run.parked':
        this.#line(
          `${sub}parked: approval ${oneLine(e.approvalId, 200)} waits in the Inbox (snotra inbox approve|deny ID, then snotra run --resume ${oneLine(e.runId, 200)})\n`,
        );
        return;
      case 'run.completed':
        this.endLine();
        return;
      case 'run.failed':
        this.endLine();
        this.io.stderr(`${sub}run ${e.outcome} (${oneLine(e.reason, 80)}): ${oneLine(e.message, 1000)}\n`);
        return;
      case 'run.started':
      case 'model.usage':
        return;
    }
  }

  /** Prints, for a run without a terminal, how a waiting request can be decided elsewhere. */
  waiting(event: ApprovalRequested | BudgetRequested): void {
    this.io.stderr(waitingLine(event));
  }
}
