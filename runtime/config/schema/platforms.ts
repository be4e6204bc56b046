import { z } from 'zod';
import { Comment, SecretRef } from './common.ts';

/** A Telegram bot (Bot API, long polling): `surfaces.platforms[]` with `kind: "telegram"`. */
const TelegramPlatform = z.strictObject({
  $comment: Comment,
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" and "-" (1 to 64)')
    .describe('A stable name of this connection, e.g. "telegram"; used by `snotra platforms pair ID CODE`.'),
  kind: z.literal('telegram').describe('The platform: "telegram" (the Telegram Bot API).'),
  agent: z.string().min(1).describe('The agent (a key of `agents`) that answers messages of paired chats.'),
  token: SecretRef.describe(
    'The bot token from @BotFather, as a secret reference: { "secret": "telegram-bot" }. It is part of every Bot API URL, so it is never logged.',
  ),
  apiBase: z
    .string()
    .optional()
    .describe(
      'The Bot API root (default "https://api.telegram.org"); set it for a self-hosted Bot API server or a test server. http:// only for loopback.',
    ),
  allowedChats: z
    .array(z.int().refine((n) => Number.isSafeInteger(n), 'a Telegram chat id'))
    .optional()
    .describe(
      'The only chat ids that may pair at all, e.g. [123456789]; messages from any other chat get no answer (default: any private chat may ask to pair).',
    ),
  maxTurnsPerMessage: z
    .int()
    .positive()
    .max(50)
    .optional()
    .describe(
      "Most model turns one message may cost (the run's model-call budget, default 8; never above the agent's own budget).",
    ),
});

/** One messaging platform connection, by `kind` (only "telegram" so far). */
export const Platform = z
  .discriminatedUnion('kind', [TelegramPlatform])
  .describe('One messaging platform connection, chosen by "kind".');
/** One messaging platform connection of the config, defaults applied. */
export type PlatformConfig = z.infer<typeof Platform>;
