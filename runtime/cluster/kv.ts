import { jetstream } from '@nats-io/jetstream';
import type { KV, KvEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { z } from 'zod';
import { ClusterError, ClusterErrorCode } from './errors.ts';

/** JetStream's "wrong last sequence" API error: the compare-and-swap lost (or `create` found the key). */
const WRONG_LAST_SEQUENCE = 10071;

/** Whether an error from `kv.create`/`kv.update` means the expected revision did not hold. */
export function isCasConflict(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code === WRONG_LAST_SEQUENCE) return true;
  return typeof e?.message === 'string' && /wrong last sequence|key exists/i.test(e.message);
}

/**
 * A KV key for an id of any characters: `k` + base64url of its UTF-8 (KV keys allow only
 * `[-/_=.A-Za-z0-9]`, and run ids or idempotency keys hold `:`).
 */
export function kvKey(id: string): string {
  return `k${Buffer.from(id, 'utf8').toString('base64url')}`;
}

/** The id a key made by {@link kvKey} stands for; null for a key of any other form. */
export function idOfKvKey(key: string): string | null {
  if (!key.startsWith('k')) return null;
  const id = Buffer.from(key.slice(1), 'base64url').toString('utf8');
  return kvKey(id) === key ? id : null;
}

/** The ids of every key in the bucket that holds a value (deleted keys are not listed). */
export async function listIds(b: Bucket): Promise<string[]> {
  const ids: string[] = [];
  for await (const key of await b.kv.keys()) {
    const id = idOfKvKey(key);
    if (id !== null) ids.push(id);
  }
  return ids;
}

/** A KV bucket with what a conditional write needs: its name and the connection. */
export interface Bucket {
  readonly kv: KV;
  readonly name: string;
  readonly nc: NatsConnection;
}

/** A value read back with the revision a compare-and-swap must name. */
export interface Versioned<T> {
  readonly value: T;
  readonly revision: number;
}

/** Encodes a record as JSON bytes. */
export function encodeRecord(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}

/** Decodes and validates an entry; null for an absent or deleted key. A malformed value is an error naming the bucket and key. */
export function decodeEntry<T>(
  entry: KvEntry | null,
  schema: z.ZodType<T>,
  where: string,
): Versioned<T> | null {
  if (entry === null || entry.operation !== 'PUT') return null;
  let raw: unknown;
  try {
    raw = JSON.parse(entry.string());
  } catch {
    throw new ClusterError(ClusterErrorCode.InvalidRecord, `${where}: the stored value is not JSON`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ClusterError(
      ClusterErrorCode.InvalidRecord,
      `${where}: the stored value is not a valid record (${parsed.error.issues[0]?.message ?? 'invalid'})`,
    );
  }
  return { value: parsed.data, revision: entry.revision };
}

/** Reads a key; null when absent. */
export async function readVersioned<T>(
  b: Bucket,
  id: string,
  schema: z.ZodType<T>,
  where: string,
): Promise<Versioned<T> | null> {
  return decodeEntry(await b.kv.get(kvKey(id)), schema, `${where} ${JSON.stringify(id)}`);
}

/**
 * A conditional write to `$KV.<bucket>.<key>`: the server's expected-last-subject-sequence check
 * plus a message id naming the key and the revision it replaces. The id is what makes the
 * compare-and-swap hold on nats-server 2.9 in a cluster: there, two writes naming the same
 * revision that arrive within the replication delay can both pass the sequence check (measured
 * here: 8 of 40 concurrent pairs), while the message-id deduplication is staged at the stream
 * leader and lets exactly one through (0 of 40); the other gets a duplicate ack. Past the
 * deduplication window the sequence check alone is exact, as no write is in flight any more.
 */
async function conditionalPut(
  b: Bucket,
  id: string,
  value: unknown,
  expected: number,
): Promise<number | null> {
  const key = kvKey(id);
  try {
    const ack = await jetstream(b.nc).publish(`$KV.${b.name}.${key}`, encodeRecord(value), {
      msgID: `${key}@${expected}`,
      expect: { lastSubjectSequence: expected },
    });
    return ack.duplicate ? null : ack.seq;
  } catch (err) {
    if (isCasConflict(err)) return null;
    throw err;
  }
}

/** Creates a key that does not exist (or whose last entry is a delete marker); null when it exists. */
export async function createIfAbsent(b: Bucket, id: string, value: unknown): Promise<number | null> {
  const rev = await conditionalPut(b, id, value, 0);
  if (rev !== null) return rev;
  const entry = await b.kv.get(kvKey(id));
  if (entry !== null && entry.operation !== 'PUT') return conditionalPut(b, id, value, entry.revision);
  return null;
}

/** Replaces the key at `revision`; null when another writer changed it first. */
export async function updateAt(
  b: Bucket,
  id: string,
  value: unknown,
  revision: number,
): Promise<number | null> {
  return conditionalPut(b, id, value, revision);
}
