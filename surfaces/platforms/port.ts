import type { InboundUpdate } from '../../runtime/index.ts';

export type { InboundUpdate };

/** How sending one message ended, as far as the adapter can tell. */
export type SendOutcome =
  /** The platform answered ok: the message exists. */
  | { readonly status: 'sent'; readonly remoteId: number }
  /**
   * The platform answered no, or the request never left this machine: nothing was sent.
   * `retryAfterMs` when trying again later may work (rate limit, a server error).
   */
  | {
      readonly status: 'not_sent';
      readonly error: string;
      readonly retryAfterMs?: number;
      /** The platform's rate limit (429): `retryAfterMs` is its `retry_after`, for the whole bot. */
      readonly rateLimited?: boolean;
    }
  /** The request may have reached the platform but no answer came: it may or may not exist. */
  | { readonly status: 'unknown'; readonly error: string };

/**
 * The port a messaging platform adapter implements (Telegram first). The gateway gives it no
 * store and no runtime: it fetches updates, sends one message, and says how long one may be.
 * Error texts it returns never contain a credential or a URL holding one.
 */
export interface PlatformAdapter {
  /** The platform's name, the prefix of reply idempotency keys (`telegram`). */
  readonly kind: string;
  /** Longest message the platform accepts, in UTF-16 code units. */
  readonly messageLimit: number;
  /**
   * Waits for updates at or after `offset` (long polling) and returns them, oldest first. Asking
   * with an offset confirms, to the platform, every update before it: the gateway asks with a
   * new offset only after the updates before it are durably queued.
   */
  receive(offset: number, signal: AbortSignal): Promise<InboundUpdate[]>;
  /** Sends one message (at most `messageLimit` long) to a chat. Never throws. */
  send(chatId: number, text: string, signal: AbortSignal): Promise<SendOutcome>;
}

/** A failure of `receive`, with a message safe to log (no token, no URL). */
export class PlatformError extends Error {
  constructor(
    message: string,
    readonly code: string,
    /** How long to wait before asking again. */
    readonly retryAfterMs: number,
  ) {
    super(message);
    this.name = 'PlatformError';
  }
}
