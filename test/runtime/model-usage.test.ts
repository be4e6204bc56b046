import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import type { RunFeedEvent } from '../../runtime/events.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import { FakeModelServer, type SeenRequest } from '../model/fake-server.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
let server: FakeModelServer | null = null;
afterEach(async () => {
  await rt?.stop();
  await server?.close();
  fx?.cleanup();
  rt = null;
  server = null;
  fx = null;
});

const data = (chunk: unknown): string => `data: ${JSON.stringify(chunk)}\n\n`;
const ev = (type: string, body: Record<string, unknown>): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;

/** Step 0 reads notes.txt, step 1 answers; each reports its tokens as its API does. */
const PROVIDERS = [
  {
    provider: 'openai-compatible',
    reply: (step: number, input: number, output: number): string[] => [
      step === 0
        ? data({
            choices: [
              {
                index: 0,
                delta: {
                  tool_calls: [
                    { index: 0, id: 'x', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } },
                  ],
                },
                finish_reason: 'tool_calls',
              },
            ],
          })
        : data({ choices: [{ index: 0, delta: { content: 'done' }, finish_reason: 'stop' }] }),
      // The usage chunk (stream_options.include_usage): no choices.
      data({
        choices: [],
        usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
      }),
      'data: [DONE]\n\n',
    ],
    asked: (r: SeenRequest) =>
      (r.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage,
  },
  {
    provider: 'anthropic',
    reply: (step: number, input: number, output: number): string[] => [
      // message_start's output count is a placeholder; message_delta's is the final (cumulative) one.
      ev('message_start', {
        message: {
          id: 'm',
          role: 'assistant',
          content: [],
          usage: { input_tokens: input, output_tokens: 1 },
        },
      }),
      ...(step === 0
        ? [
            ev('content_block_start', {
              index: 0,
              content_block: { type: 'tool_use', id: 't', name: 'read_file', input: {} },
            }),
            ev('content_block_delta', {
              index: 0,
              delta: { type: 'input_json_delta', partial_json: '{"path":"notes.txt"}' },
            }),
          ]
        : [
            ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
            ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'done' } }),
          ]),
      ev('content_block_stop', { index: 0 }),
      ev('message_delta', {
        delta: { stop_reason: step === 0 ? 'tool_use' : 'end_turn' },
        usage: { output_tokens: output },
      }),
      ev('message_stop', {}),
    ],
    asked: () => true,
  },
] as const;

describe.each(PROVIDERS)('$provider: token usage', (p) => {
  it('each model call is a model.usage event with its cost; the run sums them, and snotra runs show gives the sum', async () => {
    server = await FakeModelServer.start();
    fx = runtimeFixture({
      agents: {
        assistant: {
          mode: 'allow',
          tools: ['read_file'],
          model: {
            provider: p.provider,
            baseUrl: `${server.url}/v1`,
            model: 'm',
            apiKey: { secret: 'model-key' },
            price: { inputPerMTok: 2, outputPerMTok: 10 },
          },
        },
      },
    });
    writeFileSync(join(fx.project, 'notes.txt'), 'hello\n');
    server.route = (_req, n) => ({ sse: n === 0 ? p.reply(0, 120, 17) : p.reply(1, 150, 9) });
    const events: RunFeedEvent[] = [];
    rt = await fx.start(modelFromConfig(fx.loaded, { retryBaseMs: 10 }), {
      secretStore: new MemorySecretStore({ 'model-key': 'sk-usage-test-0123456789' }),
      onRunEvent: (e) => events.push(e),
    });
    const { runId, outcome } = await rt.chat('assistant', 'read notes.txt');
    expect(outcome.status).toBe('completed');
    for (const r of server.requests) expect(p.asked(r)).toBe(true);
    const usage = events.filter((e) => e.type === 'model.usage');
    expect(usage).toEqual([
      expect.objectContaining({ type: 'model.usage', runId, step: 0, inputTokens: 120, outputTokens: 17 }),
      expect.objectContaining({ type: 'model.usage', runId, step: 1, inputTokens: 150, outputTokens: 9 }),
    ]);
    // 120 × $2/M + 17 × $10/M, then 150 × $2/M + 9 × $10/M.
    const costs = usage.map((e) => (e.type === 'model.usage' ? e.costUsd : null));
    expect(costs[0]).toBeCloseTo(0.00041, 12);
    expect(costs[1]).toBeCloseTo(0.00039, 12);
    // Each call's usage comes after its step's answer and before what follows from it.
    const types = events.map((e) => e.type);
    expect(types.indexOf('model.usage')).toBeLessThan(types.indexOf('tool.proposed'));
    await rt.stop();
    rt = null;

    const shown = await runCliInProcess(
      ['runs', 'show', runId, '--state-dir', fx.stateDir, '--json'],
      fx.project,
    );
    expect(shown.err).toBe('');
    expect(shown.code).toBe(0);
    const summed = (
      JSON.parse(shown.out) as { usage: { inputTokens: number; outputTokens: number; costUsd: number } }
    ).usage;
    expect(summed).toMatchObject({ inputTokens: 270, outputTokens: 26 });
    expect(summed.costUsd).toBeCloseTo(0.0008, 12);
    const text = await runCliInProcess(['runs', 'show', runId, '--state-dir', fx.stateDir], fx.project);
    expect((JSON.parse(text.out) as { usage: unknown }).usage).toEqual(summed);
  });

  it('a malformed or missing count is not trusted: no usage is recorded', async () => {
    server = await FakeModelServer.start();
    fx = runtimeFixture({
      agents: {
        assistant: {
          mode: 'allow',
          tools: ['read_file'],
          model: {
            provider: p.provider,
            baseUrl: `${server.url}/v1`,
            model: 'm',
            apiKey: { secret: 'model-key' },
          },
        },
      },
    });
    server.route = () => ({ sse: p.reply(1, -5, 1.5) });
    const events: RunFeedEvent[] = [];
    rt = await fx.start(modelFromConfig(fx.loaded, { retryBaseMs: 10 }), {
      secretStore: new MemorySecretStore({ 'model-key': 'sk-usage-test-0123456789' }),
      onRunEvent: (e) => events.push(e),
    });
    const { runId, outcome } = await rt.chat('assistant', 'hi');
    expect(outcome.status).toBe('completed');
    // Anthropic's message_start placeholder (1 output token) is the only well-formed count left.
    const usage = events.filter((e) => e.type === 'model.usage');
    if (p.provider === 'anthropic')
      expect(usage).toEqual([expect.objectContaining({ inputTokens: 0, outputTokens: 1 })]);
    else expect(usage).toEqual([]);
    await rt.stop();
    rt = null;
    const shown = await runCliInProcess(
      ['runs', 'show', runId, '--state-dir', fx.stateDir, '--json'],
      fx.project,
    );
    expect((JSON.parse(shown.out) as { usage: unknown }).usage).toEqual(
      p.provider === 'anthropic' ? { inputTokens: 0, outputTokens: 1 } : null,
    );
  });
});
