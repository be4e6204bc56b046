import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { BusError, BusErrorCode } from './errors.ts';
import type { KindRegistry, KindSchemas } from './kinds.ts';

/** The envelope format version this code writes and the only one it accepts. */
export const ENVELOPE_VERSION = 1;

/** A validated envelope: what every bus payload is wrapped in. */
export interface Envelope<N extends string = string, P = unknown> {
  /** Envelope format version (always {@link ENVELOPE_VERSION}). */
  readonly v: typeof ENVELOPE_VERSION;
  /** Unique message id (a UUID when written by this code). */
  readonly id: string;
  /** Payload kind, registered in the connection's {@link KindRegistry}. */
  readonly kind: N;
  /** ISO 8601 UTC timestamp of publication. */
  readonly ts: string;
  /** Who published it (the connection's `source` name). Informational: not authenticated. */
  readonly source: string;
  /** The payload, validated against the kind's schema. */
  readonly payload: P;
}

/** Why an incoming message was dropped. Stable snake_case; used as keys of `bus.stats().invalid`. */
export const InvalidReason = {
  Oversized: 'oversized',
  InvalidJson: 'invalid_json',
  InvalidEnvelope: 'invalid_envelope',
  UnsupportedVersion: 'unsupported_version',
  UnknownKind: 'unknown_kind',
  UnexpectedKind: 'unexpected_kind',
  InvalidPayload: 'invalid_payload',
} as const;
/** One of the {@link InvalidReason} values. */
export type InvalidReason = (typeof InvalidReason)[keyof typeof InvalidReason];

const EnvelopeShape = z.object({
  v: z.literal(ENVELOPE_VERSION),
  id: z.string().min(1).max(128),
  kind: z.string().min(1).max(64),
  ts: z.iso.datetime(),
  source: z.string().min(1).max(128),
  payload: z.unknown(),
});

/** Result of {@link decodeEnvelope}: the envelope, or the reason it was rejected. */
export type DecodeResult = { ok: true; envelope: Envelope } | { ok: false; reason: InvalidReason };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes and validates one raw message. Never throws: every defect maps to an {@link InvalidReason}.
 * Checks, in order: size (before parsing), UTF-8 + JSON, version, envelope shape, kind registered,
 * kind accepted by the subscriber (`accept`, when given), payload schema.
 */
export function decodeEnvelope<K extends KindSchemas>(
  data: Uint8Array,
  registry: KindRegistry<K>,
  maxBytes: number,
  accept?: ReadonlySet<string>,
): DecodeResult {
  if (data.byteLength > maxBytes) return { ok: false, reason: InvalidReason.Oversized };
  let raw: unknown;
  try {
    raw = JSON.parse(utf8.decode(data));
  } catch {
    return { ok: false, reason: InvalidReason.InvalidJson };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: InvalidReason.InvalidEnvelope };
  }
  if ('v' in raw && raw.v !== ENVELOPE_VERSION)
    return { ok: false, reason: InvalidReason.UnsupportedVersion };
  const shape = EnvelopeShape.safeParse(raw);
  if (!shape.success) return { ok: false, reason: InvalidReason.InvalidEnvelope };
  const schema = registry.get(shape.data.kind);
  if (schema === undefined) return { ok: false, reason: InvalidReason.UnknownKind };
  if (accept !== undefined && !accept.has(shape.data.kind))
    return { ok: false, reason: InvalidReason.UnexpectedKind };
  const payload = schema.safeParse(shape.data.payload);
  if (!payload.success) return { ok: false, reason: InvalidReason.InvalidPayload };
  return { ok: true, envelope: { ...shape.data, v: ENVELOPE_VERSION, payload: payload.data } };
}

/** An envelope ready to send: the object and its JSON text with its size in bytes. */
export interface EncodedEnvelope {
  readonly envelope: Envelope;
  readonly json: string;
  readonly bytes: number;
}

/**
 * Wraps `payload` in a new envelope of `kind`. Throws `bus_unknown_kind` when the kind is not
 * registered and `bus_invalid_payload` when the payload fails its schema (the message names the JSON
 * paths that failed, never the values). The validated output of the schema is what gets sent.
 */
export function encodeEnvelope<K extends KindSchemas>(
  registry: KindRegistry<K>,
  kind: string,
  payload: unknown,
  source: string,
): EncodedEnvelope {
  const schema = registry.get(kind);
  if (schema === undefined) {
    throw new BusError(
      BusErrorCode.UnknownKind,
      `kind ${JSON.stringify(kind.slice(0, 80))} is not registered`,
    );
  }
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    const paths = parsed.error.issues.map((i) => (i.path.length === 0 ? '(root)' : i.path.join('.')));
    throw new BusError(
      BusErrorCode.InvalidPayload,
      `payload of kind ${kind} is invalid at ${[...new Set(paths)].slice(0, 5).join(', ')}`,
      { details: { kind } },
    );
  }
  const envelope: Envelope = {
    v: ENVELOPE_VERSION,
    id: randomUUID(),
    kind,
    ts: new Date().toISOString(),
    source,
    payload: parsed.data,
  };
  const json = JSON.stringify(envelope);
  return { envelope, json, bytes: Buffer.byteLength(json) };
}
