import { headers as natsHeaders } from '@nats-io/transport-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NO_TRACE,
  readTraceHeaders,
  traceHeaders,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
} from '../../runtime/bus/index.ts';
import { runs } from '../support/laws.ts';

const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${SPAN}-01`;

/** Headers as a sender on the bus might set them (anyone may). */
function received(values: Record<string, string>) {
  const h = natsHeaders();
  for (const [k, v] of Object.entries(values)) h.set(k, v);
  return h;
}

describe('trace context headers on NATS messages', () => {
  it('a valid context goes out as traceparent (and tracestate) and reads back the same', () => {
    fc.assert(
      fc.property(
        hex(32),
        hex(16),
        fc.constantFrom('00', '01'),
        fc.option(fc.constantFrom('vendor=a1', 'x=1,y=2')),
        (t, s, flags, state) => {
          fc.pre(!/^0+$/.test(t) && !/^0+$/.test(s));
          const ctx = {
            traceparent: `00-${t}-${s}-${flags}`,
            ...(state === null ? {} : { tracestate: state }),
          };
          const h = traceHeaders(ctx);
          expect(h?.get(TRACEPARENT_HEADER)).toBe(ctx.traceparent);
          expect(readTraceHeaders(h)).toEqual(ctx);
        },
      ),
      { numRuns: runs(100) },
    );
  });

  it('no context (no telemetry) means no headers at all', () => {
    expect(NO_TRACE('lead:r1')).toBeNull();
    expect(traceHeaders(null)).toBeUndefined();
    expect(readTraceHeaders(undefined)).toBeNull();
    expect(readTraceHeaders(received({ other: 'x' }))).toBeNull();
  });

  it('a malformed traceparent is neither sent nor trusted, in any of its evasions', () => {
    for (const bad of [
      '',
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${'0'.repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `01-${TRACE}-${SPAN}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE}-${SPAN}-1`,
      `00-${TRACE.slice(1)}-${SPAN}-01`,
      `00_${TRACE}_${SPAN}_01`,
    ]) {
      expect(traceHeaders({ traceparent: bad }), bad).toBeUndefined();
      expect(readTraceHeaders(received({ [TRACEPARENT_HEADER]: bad })), bad).toBeNull();
    }
    // Surrounding blanks are refused when sending; NATS trims a header value's blanks on the
    // way (as HTTP does), so one received that way reads as the context it is.
    for (const padded of [` ${VALID}`, `${VALID} `]) {
      expect(traceHeaders({ traceparent: padded })).toBeUndefined();
      expect(readTraceHeaders(received({ [TRACEPARENT_HEADER]: padded }))).toEqual({ traceparent: VALID });
    }
  });

  it('a bad tracestate is dropped while the good traceparent is kept', () => {
    for (const bad of ['', 'a'.repeat(513), 'k=v\u0000', 'k=\u00e9']) {
      expect(readTraceHeaders(received({ [TRACEPARENT_HEADER]: VALID, [TRACESTATE_HEADER]: bad }))).toEqual({
        traceparent: VALID,
      });
      expect(traceHeaders({ traceparent: VALID, tracestate: bad })?.get(TRACESTATE_HEADER)).toBe('');
    }
    // Benign look-alike: a long but legal tracestate passes.
    const long = `v=${'a'.repeat(510)}`;
    expect(readTraceHeaders(received({ [TRACEPARENT_HEADER]: VALID, [TRACESTATE_HEADER]: long }))).toEqual({
      traceparent: VALID,
      tracestate: long,
    });
  });
});
