import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../actors/model/anthropic.ts';
import { OpenAiCompatibleModel } from '../../actors/model/openai-compatible.ts';
import { stepRequest } from './helpers.ts';
import { runs } from '../support/laws.ts';

/** A fetch that answers every request with `body` as an event stream, split into the given chunks. */
function fetchOf(chunks: readonly string[]): typeof fetch {
  return (async () =>
    new Response(
      new ReadableStream({
        start(c) {
          const enc = new TextEncoder();
          for (const ch of chunks) c.enqueue(enc.encode(ch));
          c.close();
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream' } },
    )) as typeof fetch;
}

/** Splits `text` at the given cut points (sorted, deduplicated, inside the text). */
function split(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let prev = 0;
  for (const p of [...points, text.length]) {
    if (p > prev) out.push(text.slice(prev, p));
    prev = p;
  }
  return out;
}

const callArb = fc.record({
  tool: fc.constantFrom('read_file', 'list_dir', 'search_files'),
  args: fc.dictionary(
    fc.string({ minLength: 1, maxLength: 6 }),
    fc.oneof(fc.string(), fc.integer(), fc.boolean()),
    {
      maxKeys: 4,
    },
  ),
});

describe('tool-call accumulation laws', () => {
  it('OpenAI: however names and arguments are fragmented, interleaved and chunked, the calls come out the same', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(callArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.array(fc.nat(), { maxLength: 5 }), { minLength: 4, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        async (calls, fragCuts, order, byteCuts, indexBase) => {
          // Each call's name and arguments become fragments; fragments of different calls interleave.
          const queues = calls.map((c, i) => {
            const cuts = fragCuts[i] ?? [];
            const name = split(c.tool, cuts).map((f) => ({ name: f }));
            const args = split(JSON.stringify(c.args), cuts).map((f) => ({ arguments: f }));
            return [...name, ...args];
          });
          const events: string[] = [];
          let k = 0;
          while (queues.some((q) => q.length > 0)) {
            const live = queues.map((q, i) => [q, i] as const).filter(([q]) => q.length > 0);
            const [q, i] = live[(order[k++ % Math.max(order.length, 1)] ?? 0) % live.length]!;
            const fn = q.shift()!;
            const delta = { tool_calls: [{ index: indexBase + i * 7, function: fn }] };
            events.push(
              `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
            );
          }
          events.push(
            `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n`,
          );
          events.push('data: [DONE]\n\n');
          const body = events.join('');
          const out = await new OpenAiCompatibleModel(
            { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
            fetchOf(split(body, byteCuts)),
          ).step({ ...stepRequest(), secrets: undefined });
          expect(out).toEqual({
            kind: 'calls',
            calls: calls.map((c, i) => ({
              id: `c00000${String(i).padStart(3, '0')}`,
              tool: c.tool,
              args: c.args,
            })),
          });
        },
      ),
      { numRuns: runs(150) },
    );
  });

  it('Anthropic: however partial_json is fragmented and chunked, the calls come out the same', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(callArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        async (calls, fragCuts, byteCuts) => {
          const ev = (data: unknown) =>
            `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`;
          let body = ev({ type: 'message_start', message: { id: 'msg', content: [] } });
          calls.forEach((c, index) => {
            body += ev({
              type: 'content_block_start',
              index,
              content_block: { type: 'tool_use', id: `t${index}`, name: c.tool, input: {} },
            });
            for (const f of split(JSON.stringify(c.args), fragCuts))
              body += ev({
                type: 'content_block_delta',
                index,
                delta: { type: 'input_json_delta', partial_json: f },
              });
            body += ev({ type: 'content_block_stop', index });
          });
          body +=
            ev({ type: 'message_delta', delta: { stop_reason: 'tool_use' } }) + ev({ type: 'message_stop' });
          const out = await new AnthropicModel(
            { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
            fetchOf(split(body, byteCuts)),
          ).step({
            ...stepRequest(),
            secrets: undefined,
          });
          expect(out).toEqual({
            kind: 'calls',
            calls: calls.map((c, i) => ({
              id: `c00000${String(i).padStart(3, '0')}`,
              tool: c.tool,
              args: c.args,
            })),
          });
        },
      ),
      { numRuns: runs(150) },
    );
  });
});
