import type { Migration } from './migration.ts';

/**
 * Version 7: platform replies (a messaging platform such as a Telegram bot).
 *
 * - `platform_offsets`: the next `getUpdates` offset of each connection. It moves only in the
 *   transaction that queues the updates before it, so an update is either queued or will be
 *   fetched again; it is never confirmed to the platform before it is on disk.
 * - `platform_inbound`: the inbound journal, one row per update (`platform_id` + `update_id`
 *   unique: an update fetched twice is queued once), with what became of it (`queued`, a `run`,
 *   `pairing` instructions, `ignored`) and when its reply was finished (`replied_at`).
 * - `platform_outbound`: the outbound journal, one row per message part, keyed by the reply's
 *   idempotency key (`telegram:<chatId>:<messageId>`) and the part number. A part is `sending`
 *   (written durably before the request), then `sent`, `failed` (the platform said no), or
 *   `unknown` (cut by a crash mid-request: never resent).
 * - `platform_chats`: the chats a local user paired, and when one was unpaired.
 * - `platform_pairing_codes`: codes handed to unknown chats, stored as SHA-256 hashes only, with
 *   their expiry and single use; `platform_pairing_failures` counts wrong codes (rate limit).
 */
export const platforms: Migration = {
  version: 7,
  name: 'platforms',
  sql: `
CREATE TABLE IF NOT EXISTS platform_offsets (
  platform_id TEXT PRIMARY KEY,
  next_offset INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS platform_inbound (
  platform_id TEXT NOT NULL,
  update_id INTEGER NOT NULL,
  chat_id INTEGER NOT NULL,
  chat_type TEXT NOT NULL,
  message_id INTEGER NOT NULL,
  sender TEXT,
  text TEXT NOT NULL,
  sent_at INTEGER,
  received_at INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'run', 'pairing', 'ignored')),
  reason TEXT,
  run_id TEXT,
  replied_at INTEGER,
  PRIMARY KEY (platform_id, update_id)
) STRICT;
CREATE INDEX IF NOT EXISTS platform_inbound_open ON platform_inbound (platform_id, replied_at);
CREATE TABLE IF NOT EXISTS platform_outbound (
  key TEXT NOT NULL,
  part INTEGER NOT NULL,
  parts INTEGER NOT NULL,
  platform_id TEXT NOT NULL,
  chat_id INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('sending', 'sent', 'failed', 'unknown')),
  remote_id INTEGER,
  error TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (key, part)
) STRICT;
CREATE TABLE IF NOT EXISTS platform_chats (
  platform_id TEXT NOT NULL,
  chat_id INTEGER NOT NULL,
  label TEXT,
  paired_at INTEGER NOT NULL,
  paired_by TEXT NOT NULL,
  unpaired_at INTEGER,
  unpaired_by TEXT,
  PRIMARY KEY (platform_id, chat_id)
) STRICT;
CREATE TABLE IF NOT EXISTS platform_pairing_codes (
  platform_id TEXT NOT NULL,
  chat_id INTEGER NOT NULL,
  code_hash TEXT NOT NULL,
  label TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  PRIMARY KEY (platform_id, code_hash)
) STRICT;
CREATE TABLE IF NOT EXISTS platform_pairing_failures (
  platform_id TEXT NOT NULL,
  at INTEGER NOT NULL
) STRICT;
`,
};
