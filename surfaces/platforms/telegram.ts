import { z } from 'zod';
import { PlatformError, type InboundUpdate, type PlatformAdapter, type SendOutcome } from './port.ts';
import { postJson } from './post-json.ts';

/** The Bot API root when `apiBase` is not set. */
export const TELEGRAM_API_BASE = 'https://api.telegram.org';
/** Telegram's limit on one message's text. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;
/** Seconds one `getUpdates` long poll waits for an update. */
export const DEFAULT_POLL_TIMEOUT_S = 25;
/** Most bytes of one Bot API answer that are read. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Slack beyond a long poll's own timeout before the request is given up. */
const REQUEST_SLACK_MS = 15_000;

const Envelope = z.object({
  ok: z.boolean(),
  result: z.unknown().optional(),
  error_code: z.int().optional(),
  description: z.string().optional(),
  parameters: z.object({ retry_after: z.number().optional() }).optional(),
});

const Update = z.object({
  update_id: z.int().nonnegative(),
  message: z
    .object({
      message_id: z.int(),
      date: z.int().nonnegative().optional(),
      chat: z.object({ id: z.int(), type: z.string().max(32) }),
      from: z
        .object({
          first_name: z.string().max(256).optional(),
          last_name: z.string().max(256).optional(),
          username: z.string().max(64).optional(),
        })
        .optional(),
      text: z.string().max(100_000).optional(),
    })
    .optional(),
});

const SentMessage = z.object({ message_id: z.int() });

/** The name a sender shows, for the person pairing (untrusted; at most 128 characters). */
function senderName(
  from: { first_name?: string; last_name?: string; username?: string } | undefined,
): string | null {
  if (from === undefined) return null;
  const name = [from.first_name, from.last_name].filter(Boolean).join(' ');
  const text = from.username === undefined ? name : `${name} (@${from.username})`.trim();
  return text === '' ? null : text.slice(0, 128);
}

/** Codes after which the request surely never reached the server. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

type Answer =
  | { readonly kind: 'ok'; readonly result: unknown }
  | {
      readonly kind: 'refused';
      readonly status: number;
      readonly description: string;
      readonly retryAfterMs?: number;
    }
  | { readonly kind: 'network'; readonly code: string };

/**
 * The Telegram Bot API adapter: long polling `getUpdates` (`offset`, `timeout`,
 * `allowed_updates: ["message"]`) and `sendMessage`, over one HTTP connection per request (post-json.ts). The token is part of
 * every request path (`/bot<token>/<method>`): no URL is ever logged or put in an error, and
 * every error text this adapter makes is built from codes and the API's own description only.
 */
export class TelegramAdapter implements PlatformAdapter {
  readonly kind = 'telegram';
  readonly messageLimit = TELEGRAM_MESSAGE_LIMIT;
  readonly #base: string;
  readonly #token: string;
  readonly #pollTimeoutS: number;

  constructor(options: { token: string; apiBase?: string | undefined; pollTimeoutS?: number }) {
    this.#base = (options.apiBase ?? TELEGRAM_API_BASE).replace(/\/+$/, '');
    this.#token = options.token;
    this.#pollTimeoutS = options.pollTimeoutS ?? DEFAULT_POLL_TIMEOUT_S;
  }

  async receive(offset: number, signal: AbortSignal): Promise<InboundUpdate[]> {
    const answer = await this.#call(
      'getUpdates',
      { offset, timeout: this.#pollTimeoutS, limit: 100, allowed_updates: ['message'] },
      signal,
      this.#pollTimeoutS * 1000 + REQUEST_SLACK_MS,
    );
    if (answer.kind === 'network')
      throw new PlatformError(`telegram getUpdates: request failed (${answer.code})`, answer.code, 2_000);
    if (answer.kind === 'refused') {
      const wait = answer.retryAfterMs ?? (answer.status === 401 || answer.status === 404 ? 60_000 : 5_000);
      const hint =
        answer.status === 401 || answer.status === 404
          ? ' (the bot token was refused: check the secret)'
          : answer.status === 409
            ? ' (another getUpdates or a webhook uses this bot)'
            : '';
      throw new PlatformError(
        `telegram getUpdates: ${answer.status} ${answer.description}${hint}`,
        `http_${answer.status}`,
        wait,
      );
    }
    if (!Array.isArray(answer.result))
      throw new PlatformError(
        'telegram getUpdates: the result is not a list of updates',
        'bad_answer',
        5_000,
      );
    const updates: InboundUpdate[] = [];
    for (const raw of answer.result) {
      const parsed = Update.safeParse(raw);
      if (!parsed.success) {
        // An update we cannot read still moves the offset when it has an id; otherwise it is skipped.
        const id = (raw as { update_id?: unknown } | null)?.update_id;
        if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0)
          updates.push({ updateId: id, message: null });
        continue;
      }
      const u = parsed.data;
      const m = u.message;
      updates.push({
        updateId: u.update_id,
        message:
          m === undefined || m.text === undefined
            ? null
            : {
                chatId: m.chat.id,
                chatType: m.chat.type,
                messageId: m.message_id,
                sender: senderName(m.from),
                text: m.text,
                sentAt: m.date === undefined ? null : m.date * 1000,
              },
      });
    }
    return updates.sort((a, b) => a.updateId - b.updateId);
  }

  async send(chatId: number, text: string, signal: AbortSignal): Promise<SendOutcome> {
    const answer = await this.#call('sendMessage', { chat_id: chatId, text }, signal, 30_000);
    if (answer.kind === 'ok') {
      const sent = SentMessage.safeParse(answer.result);
      // The API said ok: the message exists even when its answer is odd.
      return { status: 'sent', remoteId: sent.success ? sent.data.message_id : 0 };
    }
    if (answer.kind === 'refused') {
      const retry = answer.status === 429 || answer.status >= 500;
      return {
        status: 'not_sent',
        error: `telegram sendMessage: ${answer.status} ${answer.description}`,
        ...(retry ? { retryAfterMs: answer.retryAfterMs ?? 2_000 } : {}),
        ...(answer.status === 429 ? { rateLimited: true } : {}),
      };
    }
    if (NEVER_SENT.has(answer.code))
      return {
        status: 'not_sent',
        error: `telegram sendMessage: request failed (${answer.code})`,
        retryAfterMs: 2_000,
      };
    return { status: 'unknown', error: `telegram sendMessage: no answer (${answer.code})` };
  }

  async #call(method: string, body: unknown, signal: AbortSignal, timeoutMs: number): Promise<Answer> {
    const res = await postJson(new URL(`${this.#base}/bot${this.#token}/${method}`), body, {
      signal,
      timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
    });
    if (res.kind === 'network') return { kind: 'network', code: res.code };
    if (res.kind === 'too_large')
      return { kind: 'refused', status: res.status, description: 'answer too large' };
    const text = res.text;
    let parsed: z.infer<typeof Envelope> | null = null;
    try {
      const r = Envelope.safeParse(JSON.parse(text));
      parsed = r.success ? r.data : null;
    } catch {
      parsed = null;
    }
    if (parsed === null)
      return { kind: 'refused', status: res.status, description: 'the answer is not a Bot API envelope' };
    if (parsed.ok && res.status >= 200 && res.status < 300) return { kind: 'ok', result: parsed.result };
    const retryAfter = parsed.parameters?.retry_after;
    return {
      kind: 'refused',
      status: parsed.error_code ?? res.status,
      // The API's own words, trimmed and without control characters; it never holds the token.
      description: [...(parsed.description ?? 'no description')]
        .map((ch) => ((ch.codePointAt(0) ?? 0) < 0x20 || ch === '\u007f' ? ' ' : ch))
        .join('')
        .slice(0, 300),
      ...(retryAfter === undefined ? {} : { retryAfterMs: Math.min(retryAfter, 3600) * 1000 }),
    };
  }
}
