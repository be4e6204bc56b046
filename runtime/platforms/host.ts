import type { Logger } from 'pino';
import type { SecretResolver } from '../../actors/tools/types.ts';
import type { Budget, RunOutcome } from '../../machines/run/types.ts';
import type { AgentMessage } from '../../machines/agent/machine.ts';
import { makeRunId, platformIdOfMessageId, platformMessageId } from '../../machines/run/run-id.ts';
import { DEFAULT_PAIRING_LIMITS } from '../../store/index.ts';
import type {
  InboundRecord,
  InboundUpdate,
  OutboundRecord,
  PairedChat,
  PartResult,
  Store,
} from '../../store/index.ts';
import type { PlatformConfig } from '../config/schema.ts';
import { systemClock, type Clock } from '../time/clock.ts';
import { hashPairingCode, newPairingCode } from './pairing-code.ts';

export type { InboundRecord, InboundUpdate, RunOutcome };

/** The surface name of platform runs. */
export const PLATFORM_SURFACE = 'platform';
/** Model turns one message may cost when `maxTurnsPerMessage` is not set. */
export const DEFAULT_MAX_TURNS_PER_MESSAGE = 8;

/** What to do with one inbound message. */
export type Route =
  | { readonly kind: 'ignore'; readonly reason: string }
  | { readonly kind: 'reply'; readonly reason: string; readonly text: string }
  | { readonly kind: 'run'; readonly runId: string };

/** What the host needs from the runtime. */
export interface PlatformHostDeps {
  readonly store: Store;
  readonly platforms: readonly PlatformConfig[];
  readonly secrets: SecretResolver;
  readonly logger: Logger;
  /** The runtime's clock (reply pacing and retries); the system clock when absent. */
  readonly clock?: Clock;
  /** Publishes an agent message (idempotent per message id). */
  readonly send: (agentId: string, message: Omit<AgentMessage, 'type'>) => Promise<void>;
  readonly waitForRun: (runId: string) => Promise<RunOutcome>;
}

/**
 * Whether a message was surely sent before `pairedAt`. Telegram dates are whole seconds (rounded
 * down), so only a date a full second before the pairing counts; without a date, the moment it
 * was queued does.
 */
function sentBefore(rec: InboundRecord, pairedAt: number): boolean {
  return rec.sentAt !== null ? rec.sentAt + 1000 <= pairedAt : rec.receivedAt < pairedAt;
}

/** The idempotency key of the reply to one message. */
export function replyKey(kind: string, chatId: number, messageId: number): string {
  return `${kind}:${chatId}:${messageId}`;
}

export { platformMessageId };

/**
 * The runtime side of platform replies (surface `platform`): the durable journals, pairing and
 * the runs. A remote message is untrusted input: it can only become the text of a new
 * unattended run of the configured agent, or get pairing instructions; nothing here reads it as
 * a command, so no message can decide an approval, pair a chat or reach the bot token.
 */
export class PlatformHost {
  readonly #byId: ReadonlyMap<string, PlatformConfig>;

  constructor(private readonly deps: PlatformHostDeps) {
    this.#byId = new Map(deps.platforms.map((p) => [p.id, p]));
  }

  /** The configured connections. */
  get connections(): readonly PlatformConfig[] {
    return this.deps.platforms;
  }

  /** The logger platform surfaces log through (redacted). */
  /** How many reply parts to the chat of `rec` failed for good since it was last told so. */
  failedSinceNotice(rec: { platformId: string; chatId: number }, noticeSuffix: string): number {
    return this.deps.store.platforms.outbound.failedSinceNotice(rec.platformId, rec.chatId, noticeSuffix);
  }

  /** The recorded parts of reply `key` (sent, failed, unknown or being sent), in order. */
  replyParts(key: string): OutboundRecord[] {
    return this.deps.store.platforms.outbound.parts(key);
  }

  /** The ids of the approvals a run waits for (a start tells the chat of each one it was not told of). */
  pendingApprovals(runId: string): string[] {
    return this.deps.store.approvals.pendingOfRunIds(runId);
  }

  /** The runtime's clock: the send pace and retry waits of replies run on it. */
  get clock(): Clock {
    return this.deps.clock ?? systemClock;
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  /**
   * The bot token of a connection, from the secret store. It is registered with the redactor
   * before it is returned, so no log line, stored record or reply can carry it afterwards.
   */
  async token(platformId: string): Promise<string> {
    return this.deps.secrets.resolve(this.#config(platformId).token);
  }

  /** Replaces every registered secret in a text (replies and error messages pass through here). */
  redact(text: string): string {
    return this.deps.store.redactor.redactString(text);
  }

  /** The `getUpdates` offset to ask with. */
  offset(platformId: string): number {
    return this.deps.store.platforms.inbound.offset(platformId);
  }

  /** Queues fetched updates durably and moves the offset past them (one transaction); returns what is new. */
  queue(platformId: string, updates: readonly InboundUpdate[]): InboundRecord[] {
    return this.deps.store.platforms.inbound.queue(platformId, updates);
  }

  /** Messages whose reply is not finished (what a start resumes), oldest first. */
  open(platformId: string): InboundRecord[] {
    return this.deps.store.platforms.inbound.open(platformId);
  }

  /** At start: parts cut mid-send by a crash become `unknown` (audited) and are not resent. */
  markCut(platformId: string): OutboundRecord[] {
    return this.deps.store.platforms.outbound.markCut(platformId);
  }

  /**
   * Decides what a message gets, durably, and starts its run when it gets one. A chat outside
   * `allowedChats`, or a group chat, gets nothing. A chat that is not paired gets pairing
   * instructions with a new code (rate-limited) and no run. A paired chat's message becomes
   * one unattended run (its id is derived from platform, chat and message, so a restart never
   * starts a second). Calling it again for the same message gives the same answer. `onRun` hears
   * the run's id before the run starts (its first events may come before this resolves).
   */
  async route(rec: InboundRecord, onRun?: (runId: string) => void): Promise<Route> {
    const cfg = this.#config(rec.platformId);
    const inbound = this.deps.store.platforms.inbound;
    if (rec.status === 'ignored') return { kind: 'ignore', reason: rec.reason ?? 'ignored' };
    if (rec.status === 'run' && rec.runId !== null) {
      onRun?.(rec.runId);
      await this.#startRun(cfg, rec);
      return { kind: 'run', runId: rec.runId };
    }
    const allowed = cfg.allowedChats === undefined || cfg.allowedChats.includes(rec.chatId);
    if (!allowed || (rec.chatType !== 'private' && cfg.allowedChats === undefined))
      return this.#ignore(rec, allowed ? 'not_a_private_chat' : 'chat_not_allowed');
    const since = this.deps.store.platforms.pairing.pairedSince(rec.platformId, rec.chatId);
    if (since !== null) {
      // Only what was sent after the pairing is read: a message written before it (queued while
      // the runtime was down, or answered with pairing instructions) never becomes a run.
      if (rec.status === 'pairing' || sentBefore(rec, since)) return this.#ignore(rec, 'sent_before_pairing');
      const runId = makeRunId(cfg.agent, platformMessageId(rec.platformId, rec.chatId, rec.messageId));
      inbound.route(rec.platformId, rec.updateId, { status: 'run', runId });
      onRun?.(runId);
      await this.#startRun(cfg, rec);
      return { kind: 'run', runId };
    }
    const reply = this.#pairingReply(cfg, rec);
    inbound.route(rec.platformId, rec.updateId, { status: 'pairing', reason: reply.reason });
    this.deps.logger.info(
      { platform: rec.platformId, chatId: rec.chatId, reason: reply.reason },
      'platform: message from a chat that is not paired',
    );
    return reply;
  }

  #ignore(rec: InboundRecord, reason: string): Route {
    this.deps.store.platforms.inbound.route(rec.platformId, rec.updateId, {
      status: 'ignored',
      reason,
      done: true,
    });
    this.deps.logger.info(
      { platform: rec.platformId, chatId: rec.chatId, reason },
      'platform: message ignored',
    );
    return { kind: 'ignore', reason };
  }

  #pairingReply(cfg: PlatformConfig, rec: InboundRecord): Route & { kind: 'reply' } {
    const code = newPairingCode();
    const canonical = code.replace('-', '');
    const issued = this.deps.store.platforms.pairing.issue(
      cfg.id,
      rec.chatId,
      hashPairingCode(cfg.id, canonical),
      rec.sender,
    );
    const intro = 'This bot answers only chats its owner has paired with their Snotra runtime.';
    if (issued.issued) {
      const minutes = Math.max(1, Math.round(DEFAULT_PAIRING_LIMITS.ttlMs / 60_000));
      return {
        kind: 'reply',
        reason: 'pairing_code_issued',
        text:
          `${intro}\n\nTo pair this chat, the owner runs on their computer:\n\n` +
          `snotra platforms pair ${cfg.id} ${code}\n\n` +
          `The code works once and expires in ${minutes} minutes. Nothing you send is read until then.`,
      };
    }
    const text =
      issued.reason === 'code_active'
        ? `${intro}\n\nA pairing code was already sent to this chat; it works until it expires. Ask for a new one after that.`
        : `${intro}\n\nNo pairing code can be given right now; try again later.`;
    return { kind: 'reply', reason: `pairing_${issued.reason}`, text };
  }

  async #startRun(cfg: PlatformConfig, rec: InboundRecord): Promise<void> {
    await this.deps.send(cfg.agent, {
      messageId: platformMessageId(rec.platformId, rec.chatId, rec.messageId),
      sessionId: `platform:${rec.platformId}:${rec.chatId}`,
      taskId: null,
      parentRunId: null,
      surface: PLATFORM_SURFACE,
      interaction: 'unattended',
      text: rec.text,
      // A paired chat is one durable conversation (never refused: see runtime/sessions).
      conversation: true,
    });
  }

  /** Resolves with a run's outcome when it ends (at once when it already has). */
  waitForRun(runId: string): Promise<RunOutcome> {
    return this.deps.waitForRun(runId);
  }

  /** Claims a reply part for sending (null: never tried, go ahead) or returns what is known of it. */
  beginPart(input: {
    key: string;
    part: number;
    parts: number;
    platformId: string;
    chatId: number;
  }): OutboundRecord | null {
    return this.deps.store.platforms.outbound.begin(input);
  }

  /** Gives back a claimed part that surely was not sent (the next start sends it). */
  releasePart(key: string, part: number): void {
    this.deps.store.platforms.outbound.release(key, part);
  }

  /** Records the platform's answer to one part. */
  finishPart(key: string, part: number, result: PartResult): void {
    this.deps.store.platforms.outbound.finish(key, part, result);
  }

  /** Marks a message's reply finished. */
  replied(rec: InboundRecord): void {
    this.deps.store.platforms.inbound.replied(rec.platformId, rec.updateId);
  }

  /** Whether a message's chat is paired now (a chat unpaired while its run went on gets no answer). */
  isPaired(rec: InboundRecord): boolean {
    return this.deps.store.platforms.pairing.isPaired(rec.platformId, rec.chatId);
  }

  /** Paired chats of every connection. */
  chats(): PairedChat[] {
    return this.deps.store.platforms.pairing.chats();
  }

  /**
   * The budget of a run: a platform run may make at most `maxTurnsPerMessage` model calls
   * (never more than the agent's own budget); other runs keep theirs.
   */
  limitBudget(message: Pick<AgentMessage, 'surface' | 'messageId'>, budget: Budget): Budget {
    if (message.surface !== PLATFORM_SURFACE) return budget;
    const platformId = platformIdOfMessageId(message.messageId) ?? '';
    const cfg = this.#byId.get(platformId);
    const cap = cfg?.maxTurnsPerMessage ?? DEFAULT_MAX_TURNS_PER_MESSAGE;
    return { ...budget, modelCalls: Math.min(budget.modelCalls, cap) };
  }

  #config(platformId: string): PlatformConfig {
    const cfg = this.#byId.get(platformId);
    if (cfg === undefined) throw new Error(`unknown platform connection ${JSON.stringify(platformId)}`);
    return cfg;
  }
}
