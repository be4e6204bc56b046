import { setMaxListeners } from 'node:events';
import {
  type InboundRecord,
  type PlatformConfig,
  type PlatformHost,
  replyKey,
  type Route,
  type RunFeedEvent,
  type RunOutcome,
} from '../../runtime/index.ts';
import { PlatformError, type PlatformAdapter } from './port.ts';
import { InFlight } from './in-flight.ts';
import { SendPace, TELEGRAM_PACE, waitOn, type PaceLimits } from './send-pace.ts';
import { splitMessage } from './split.ts';

/** The key suffix of the one notice a chat gets after a reply to it failed for good. */
const UNDELIVERED_NOTICE = ':undelivered-notice';
/** How long a stop waits for requests in flight. */
const STOP_GRACE_MS = 5_000;
/** Tries to handle one message before it waits for the next start. */
const MAX_HANDLE_TRIES = 4;
/** Longest wait between two polls after a failure. */
const MAX_BACKOFF_MS = 60_000;

/** The text a finished run's message gets back. */
export function replyText(outcome: RunOutcome): string {
  if (outcome.status === 'completed') {
    const text = outcome.text?.trim() ?? '';
    return text === '' ? 'Done.' : (outcome.text as string);
  }
  if (outcome.status === 'denied') return `This request was denied on the host (${outcome.reason}).`;
  return `This request failed (${outcome.reason}).`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * One platform connection: polls the adapter, queues each update durably before the offset that
 * confirms it is used, routes every message through the host (ignored, pairing instructions or
 * one unattended run) and delivers the reply through the outbound journal, split at the
 * platform's limit. At start it resumes what a restart cut: parts cut mid-send become
 * `unknown` (never resent), queued messages are routed, runs are waited for and answered.
 */
export class PlatformGateway {
  /** Stops polling, waits and new parts at once. */
  readonly #abort = new AbortController();
  /** Cuts requests in flight: only once they had `STOP_GRACE_MS` to finish. */
  readonly #sendAbort = new AbortController();
  readonly #inflight = new Set<Promise<boolean>>();
  readonly #handling = new Set<string>();
  /** Failed attempts to handle a message (it is tried again a few times, then at the next start). */
  readonly #failures = new Map<string, number>();
  /** Replies in flight: run id → the message it answers. */
  readonly #runs = new Map<string, InboundRecord>();
  #loop: Promise<void> | null = null;
  /** The bot's send pace: its rate limits kept here, so replies wait instead of being refused. */
  readonly #pace: SendPace;
  /** Requests of this bot unanswered at once: no more than one second's turns. */
  readonly #sending: InFlight;
  #unsubscribe: () => void = () => {};

  constructor(
    private readonly host: PlatformHost,
    private readonly config: PlatformConfig,
    private readonly adapter: PlatformAdapter,
    private readonly onRunEvent: (listener: (e: RunFeedEvent) => void) => () => void,
    pace: PaceLimits = TELEGRAM_PACE,
  ) {
    this.#pace = new SendPace(host.clock, pace);
    this.#sending = new InFlight(Math.max(1, Math.floor(pace.botPerSecond)));
    // Every reply waiting for its turn listens for the stop: hundreds may wait under a rate limit.
    setMaxListeners(0, this.#abort.signal);
  }

  /** Resumes cut work and starts polling. */
  start(): void {
    const log = this.host.logger;
    for (const cut of this.host.markCut(this.config.id)) {
      log.warn(
        { platform: this.config.id, key: cut.key, part: cut.part, parts: cut.parts },
        'platform: a reply part was cut mid-send by a restart; it may not have arrived and is not resent',
      );
      // The chat learns that something may be missing: a notice under its own key (sent at most once).
      void this.#deliver(
        cut,
        `${cut.key}:cut:${cut.part}`,
        `A restart interrupted a reply (part ${cut.part + 1} of ${cut.parts}); it may be missing here. It is not sent again, so nothing arrives twice.`,
      ).catch(() => {});
    }
    this.#unsubscribe = this.onRunEvent((e) => this.#onRunEvent(e));
    for (const rec of this.host.open(this.config.id)) void this.#handle(rec);
    this.#loop = this.#poll();
  }

  /**
   * Stops polling; a reply part whose request is in flight gets up to `STOP_GRACE_MS` to be
   * answered (so a graceful stop rarely leaves an unknown part), the rest waits for the next start.
   */
  async stop(): Promise<void> {
    this.#abort.abort();
    this.#unsubscribe();
    await this.#loop;
    if (this.#inflight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.#inflight]),
        new Promise((r) => (timer = setTimeout(r, STOP_GRACE_MS))),
      ]);
      clearTimeout(timer);
    }
    this.#sendAbort.abort();
  }

  async #poll(): Promise<void> {
    const signal = this.#abort.signal;
    const log = this.host.logger;
    let backoff = 1_000;
    while (!signal.aborted) {
      try {
        const updates = await this.adapter.receive(this.host.offset(this.config.id), signal);
        if (signal.aborted) break;
        // Durable before the next getUpdates confirms them (its offset is computed from this).
        for (const rec of this.host.queue(this.config.id, updates)) void this.#handle(rec);
        backoff = 1_000;
      } catch (err) {
        if (signal.aborted) break;
        const e = err instanceof PlatformError ? err : null;
        const wait = Math.min(MAX_BACKOFF_MS, Math.max(e?.retryAfterMs ?? 0, backoff));
        log.warn(
          {
            platform: this.config.id,
            code: e?.code ?? 'error',
            err: this.host.redact(e?.message ?? 'receiving updates failed'),
            retryInMs: wait,
          },
          'platform: receiving updates failed',
        );
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        await sleep(wait, signal);
      }
    }
  }

  async #handle(rec: InboundRecord): Promise<void> {
    const id = `${rec.platformId}\0${rec.updateId}`;
    if (this.#handling.has(id)) return;
    this.#handling.add(id);
    try {
      // A reply to this chat failed for good (blocked, chat not found) since it was last told: one notice first.
      if (this.host.failedSinceNotice(rec, UNDELIVERED_NOTICE) > 0)
        await this.#deliver(
          rec,
          `${replyKey(this.adapter.kind, rec.chatId, rec.messageId)}${UNDELIVERED_NOTICE}`,
          'A reply could not be delivered to this chat earlier; it was not sent.',
        );
      // The run is known before it starts: it may ask for an approval before `route` returns.
      const route: Route = await this.host.route(rec, (runId) => this.#runs.set(runId, rec));
      if (route.kind === 'ignore') return;
      if (route.kind === 'reply') {
        if (await this.#deliver(rec, replyKey(this.adapter.kind, rec.chatId, rec.messageId), route.text))
          this.host.replied(rec);
        return;
      }
      this.#runs.set(route.runId, rec);
      // A run that parked before a stop may not have told its chat yet (the notice waited its turn
      // when the stop came, and a recovered run parks again before this gateway listens).
      for (const approvalId of this.host.pendingApprovals(route.runId)) this.#noticeParked(rec, approvalId);
      const outcome = await this.host.waitForRun(route.runId);
      this.#runs.delete(route.runId);
      if (this.#abort.signal.aborted) return;
      if (!this.host.isPaired(rec)) {
        // Unpaired while its run went on: the chat is no longer trusted with an answer.
        this.host.logger.info(
          { platform: rec.platformId, chatId: rec.chatId, runId: route.runId },
          'platform: chat unpaired before its reply; not answered',
        );
        this.host.replied(rec);
      } else if (
        await this.#deliver(rec, replyKey(this.adapter.kind, rec.chatId, rec.messageId), replyText(outcome))
      ) {
        this.host.replied(rec);
      }
    } catch (err) {
      if (this.#abort.signal.aborted) return;
      const tries = (this.#failures.get(id) ?? 0) + 1;
      this.#failures.set(id, tries);
      this.host.logger.error(
        {
          platform: rec.platformId,
          chatId: rec.chatId,
          updateId: rec.updateId,
          tries,
          err: this.host.redact((err as Error).message),
        },
        tries < MAX_HANDLE_TRIES
          ? 'platform: a message could not be handled; trying again'
          : 'platform: a message could not be handled; it is tried again at the next start',
      );
      // Safe to repeat: routing, the run id and every reply part are idempotent.
      if (tries < MAX_HANDLE_TRIES) setTimeout(() => void this.#handle(rec), 2_000 * tries).unref();
    } finally {
      this.#handling.delete(id);
    }
  }

  /**
   * A platform run that waits for a human gets one notice per approval that a human on the host
   * must decide: sent when the approval is requested (a decision that comes before the run has
   * parked would otherwise leave the chat without one) and, idempotently, when the run parks
   * (a restart between the request and the notice).
   */
  #onRunEvent(e: RunFeedEvent): void {
    if (e.type !== 'run.parked' && e.type !== 'approval.requested') return;
    const rec = this.#runs.get(e.runId);
    if (rec !== undefined) this.#noticeParked(rec, e.approvalId);
  }

  /** The one notice per approval (its key makes a repeat a no-op). */
  #noticeParked(rec: InboundRecord, approvalId: string): void {
    const key = `${replyKey(this.adapter.kind, rec.chatId, rec.messageId)}:parked:${approvalId}`;
    void this.#deliver(
      rec,
      key,
      'This request needs an approval on the host; it waits in the Inbox. The answer comes here once it is decided.',
    ).catch(() => {});
  }

  /**
   * Sends a text under an idempotency key, part by part: a part already sent (or failed, or
   * cut mid-send) is never sent again; a new part is recorded `sending` durably first and
   * `sent` only once the platform answered ok. Returns false when a stop cut it short (the rest
   * is sent at the next start).
   */
  #deliver(
    rec: { readonly platformId: string; readonly chatId: number },
    key: string,
    text: string,
  ): Promise<boolean> {
    const p = this.#deliverParts(rec, key, text);
    this.#inflight.add(p);
    void p.finally(() => this.#inflight.delete(p)).catch(() => {});
    return p;
  }

  async #deliverParts(
    rec: { readonly platformId: string; readonly chatId: number },
    key: string,
    text: string,
  ): Promise<boolean> {
    const redacted = this.host.redact(text);
    const parts = splitMessage(redacted, this.adapter.messageLimit).filter((p) => p.trim() !== '');
    if (parts.length === 0) parts.push('Done.');
    const log = this.host.logger;
    // Parts already sent, failed or cut (a restart): never sent again.
    const settled = new Set(this.host.replyParts(key).map((p) => p.part));
    for (const [i, part] of parts.entries()) {
      if (this.#abort.signal.aborted) return false;
      if (settled.has(i)) continue;
      const ended = await this.#sendPart({ ...rec, parts: parts.length }, key, i, part);
      if (ended === 'stopped') return false;
    }
    log.info({ platform: rec.platformId, key, parts: parts.length }, 'platform: reply delivered');
    return true;
  }

  /**
   * Sends one claimed part at the bot's pace until the platform takes it or ends it. A rate
   * limit (429) holds the whole bot for its `retry_after` and the part tries again — however
   * long that takes; other "try again" answers back off with jitter. Only a refusal without
   * "try again" (403 blocked, 400 chat not found) ends the part `failed`; no answer ends it
   * `unknown`. A stop before a try gives the part back (the next start sends it).
   */
  async #sendPart(
    rec: { readonly platformId: string; readonly chatId: number; readonly parts: number },
    key: string,
    i: number,
    part: string,
  ): Promise<'ended' | 'stopped'> {
    const log = this.host.logger;
    const stop = this.#abort.signal;
    for (let attempt = 1; ; attempt++) {
      // The part waits unclaimed: a crash while it waits leaves nothing `sending`, and the next start sends it.
      if (stop.aborted || !(await this.#sending.acquire(stop))) return 'stopped';
      let outcome: Awaited<ReturnType<PlatformAdapter['send']>>;
      try {
        if (!(await this.#pace.turn(rec.chatId, stop))) return 'stopped';
        const prior = this.host.beginPart({
          key,
          part: i,
          parts: rec.parts,
          platformId: rec.platformId,
          chatId: rec.chatId,
        });
        if (prior !== null) return 'ended';
        outcome = await this.adapter.send(rec.chatId, part, this.#sendAbort.signal);
      } finally {
        this.#sending.release();
      }
      if (outcome.status === 'sent') {
        this.host.finishPart(key, i, { status: 'sent', remoteId: outcome.remoteId });
        return 'ended';
      }
      if (outcome.status === 'unknown') {
        this.host.finishPart(key, i, { status: 'unknown', error: outcome.error });
        log.warn(
          { platform: rec.platformId, key, part: i, err: this.host.redact(outcome.error) },
          'platform: no answer to a reply part; it may not have arrived and is not resent',
        );
        return 'ended';
      }
      if (outcome.retryAfterMs === undefined) {
        this.host.finishPart(key, i, { status: 'failed', error: outcome.error });
        log.warn(
          { platform: rec.platformId, key, part: i, err: this.host.redact(outcome.error) },
          'platform: a reply part was refused for good',
        );
        return 'ended';
      }
      // Surely not sent: given back until its next turn.
      this.host.releasePart(key, i);
      if (outcome.rateLimited === true) {
        this.#pace.hold(outcome.retryAfterMs);
        if (attempt === 1 || attempt % 10 === 0)
          log.info(
            { platform: rec.platformId, key, part: i, attempt, retryAfterMs: outcome.retryAfterMs },
            'platform: rate limited; the reply waits its turn',
          );
        continue;
      }
      const wait = this.#pace.backoff(attempt);
      log.warn(
        {
          platform: rec.platformId,
          key,
          part: i,
          attempt,
          retryInMs: Math.round(wait),
          err: this.host.redact(outcome.error),
        },
        'platform: a reply part was not taken; trying again',
      );
      await waitOn(this.host.clock, wait, stop);
    }
  }
}
