import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/** The NATS header carrying a W3C trace context's `traceparent` (the contract's header name). */
export const TRACEPARENT_HEADER = 'traceparent';
/** The NATS header carrying a W3C trace context's `tracestate`, sent only when there is one. */
export const TRACESTATE_HEADER = 'tracestate';

/** A W3C trace context as it travels: `traceparent` (version 00) and an optional `tracestate`. */
export interface TraceContextValues {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** A run's current trace context, or null (no telemetry, or a run telemetry has not seen). */
export type TraceOf = (runId: string) => TraceContextValues | null;

/** Never a trace context: what the runtime uses when the config has no `telemetry`. */
export const NO_TRACE: TraceOf = () => null;

const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
/** W3C tracestate: at most 32 `key=value` members, printable ASCII without `,`/`=` in values; 512 chars here. */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/** Whether `value` is a version-00 `traceparent` with a non-zero trace and span id. */
export function isTraceparent(value: string): boolean {
  return TRACEPARENT.test(value);
}

/**
 * The NATS headers of a message that belongs to a run's trace; undefined (no headers at all)
 * without a context, or when the context is malformed (it is never sent half-valid).
 */
export function traceHeaders(ctx: TraceContextValues | null): MsgHdrs | undefined {
  if (ctx === null || !isTraceparent(ctx.traceparent)) return undefined;
  const h = natsHeaders();
  h.set(TRACEPARENT_HEADER, ctx.traceparent);
  if (ctx.tracestate !== undefined && TRACESTATE.test(ctx.tracestate))
    h.set(TRACESTATE_HEADER, ctx.tracestate);
  return h;
}

/**
 * The trace context a received message carries; null when it has none or its `traceparent` is
 * malformed (anyone on the bus can set headers: a bad one is ignored, never trusted in part).
 */
export function readTraceHeaders(h: MsgHdrs | undefined): TraceContextValues | null {
  const traceparent = h?.get(TRACEPARENT_HEADER) ?? '';
  if (!isTraceparent(traceparent)) return null;
  const tracestate = h?.get(TRACESTATE_HEADER) ?? '';
  return TRACESTATE.test(tracestate) ? { traceparent, tracestate } : { traceparent };
}
