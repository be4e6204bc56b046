import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelProviderError } from '../../actors/model/errors.ts';
import { readSse, type SseEvent } from '../../actors/model/sse.ts';
import { runs } from '../support/laws.ts';

function streamOf(chunks: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(typeof ch === 'string' ? enc.encode(ch) : ch);
      c.close();
    },
  });
}

async function all(chunks: readonly (string | Uint8Array)[], maxLineChars = 1000, maxBytes = 100_000) {
  const out: SseEvent[] = [];
  for await (const e of readSse(streamOf(chunks), { maxBytes, maxLineChars })) out.push(e);
  return out;
}

describe('SSE reader', () => {
  it('parses data, event names, comments and multi-line data with LF, CRLF and CR endings', async () => {
    const text =
      ': keep-alive\nevent: a\ndata: one\ndata: two\n\r\ndata:x\r\rid: 7\nretry: 10\ndata: {"k":1}\n\n';
    expect(await all([text])).toEqual([
      { event: 'a', data: 'one\ntwo' },
      { event: '', data: 'x' },
      { event: '', data: '{"k":1}' },
    ]);
  });

  it('yields the same events however the bytes are split (CRLF and multi-byte characters across chunks)', async () => {
    const text = 'event: e\r\ndata: héllo ✓ 𝄞\r\n\r\ndata: [DONE]\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    const expected = await all([text]);
    expect(expected).toEqual([
      { event: 'e', data: 'héllo ✓ 𝄞' },
      { event: '', data: '[DONE]' },
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }),
        async (cuts) => {
          const points = [0, ...[...cuts].sort((a, b) => a - b), bytes.length];
          const chunks = points.slice(1).map((end, i) => bytes.slice(points[i], end));
          expect(await all(chunks)).toEqual(expected);
        },
      ),
      { numRuns: runs(200) },
    );
  });

  it('drops an event whose last line was cut, but keeps a complete one without its blank line', async () => {
    expect(await all(['data: {"a":1}\n\ndata: {"b":'])).toEqual([{ event: '', data: '{"a":1}' }]);
    expect(await all(['data: [DONE]\n'])).toEqual([{ event: '', data: '[DONE]' }]);
  });

  it('fails on a line longer than the bound without buffering the rest', async () => {
    await expect(all(['data: ' + 'x'.repeat(2000)], 1000)).rejects.toThrow(/exceeded 1000 characters/);
    await expect(
      all(['data: ' + 'x'.repeat(600) + '\n', 'data: ' + 'y'.repeat(600) + '\n\n'], 1000),
    ).rejects.toThrow(ModelProviderError);
  });

  it('fails when the body is larger than its bound', async () => {
    const chunk = 'data: ' + 'z'.repeat(90) + '\n\n';
    await expect(
      all(
        Array.from({ length: 20 }, () => chunk),
        1000,
        1000,
      ),
    ).rejects.toThrow(/exceeded 1000 bytes/);
  });
});
