import { TraceFlags, type SpanContext } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span context as a W3C `traceparent` header value (version 00). */
export function toTraceparent(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${(ctx.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A stored or received `traceparent` as a remote span context; null when it is not one. */
export function fromTraceparent(value: string): SpanContext | null {
  const m = TRACEPARENT.exec(value);
  if (m === null || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return null;
  return {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: Number.parseInt(m[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
}
