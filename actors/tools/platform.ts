/** The seam to messaging platforms (`send_message`): injected, implemented by surfaces' adapters. */

/** Options of one send. */
export interface PlatformSendOptions {
  /** Stable across retries of the same call; adapters pass it on where the platform accepts one. */
  readonly idempotencyKey: string;
  readonly signal: AbortSignal;
}

/** What a platform reports about a sent message. */
export interface PlatformSendResult {
  /** The platform's id of the message, when it gives one. */
  readonly messageId?: string;
}

/** Sends text to a channel of a messaging platform. */
export interface PlatformAdapter {
  send(channel: string, text: string, options: PlatformSendOptions): Promise<PlatformSendResult>;
}
