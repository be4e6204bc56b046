import type { Database } from 'better-sqlite3';
import { decodeText } from '../codec.ts';
import type { TextCodec } from '../codec.ts';
import { AUDIT_DICTIONARY } from './dictionary.ts';

/**
 * How an `audit_log` row's body is stored (schema version 8): its JSON text (the array of its
 * events' hashed bodies) compressed (store/codec.ts, tag 0x41 with AUDIT_DICTIONARY); a body
 * over 16 MiB is stored plain. Versions 3–7 stored the text itself (a read-only open of an older
 * file still reads it).
 */
export const AUDIT_CODEC: TextCodec = {
  what: 'audit row',
  tag: 0x41,
  dictionary: AUDIT_DICTIONARY,
  maxBytes: 16 * 1024 * 1024,
};

/** A row's body text, whatever its layout; null when a blob does not decode (a tampered row). */
export function auditBodyText(body: unknown): string | null {
  if (typeof body === 'string') return body;
  if (!(body instanceof Uint8Array)) return null;
  try {
    return decodeText(AUDIT_CODEC, body);
  } catch {
    return null;
  }
}

/**
 * Registers `snotra_audit_body(body)` on a connection: the decoded body text (NULL when it does
 * not decode), for the `audit_events` view and ad-hoc SQL through the store's connection.
 */
export function registerAuditSqlFunctions(db: Database): void {
  db.function('snotra_audit_body', { deterministic: true }, (body: unknown) => auditBodyText(body));
}
