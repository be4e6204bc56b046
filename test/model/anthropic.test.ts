import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANTHROPIC_VERSION, AnthropicModel } from '../../actors/model/anthropic.ts';
import { ModelErrorCode, ModelProviderError } from '../../actors/model/errors.ts';
import type { HttpModelSettings } from '../../actors/model/settings.ts';
import { FakeModelServer, fixture } from './fake-server.ts';
import { API_KEY, stepRequest } from './helpers.ts';

/** The token usage every fixture of this provider reports. */
const FIXTURE_USAGE = { inputTokens: 472, outputTokens: 89 };

let server: FakeModelServer;
beforeEach(async () => {
  server = await FakeModelServer.start();
});
afterEach(async () => {
  await server.close();
});

function model(extra: Partial<HttpModelSettings> = {}): AnthropicModel {
  return new AnthropicModel({
    baseUrl: `${server.url}/v1`,
    model: 'claude-sonnet-4-5',
    apiKey: { secret: 'model-key' },
    retryBaseMs: 10,
    ...extra,
  });
}

async function failure(p: Promise<unknown>): Promise<ModelProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ModelProviderError);
  return err as ModelProviderError;
}

describe('anthropic provider', () => {
  it('sends a streamed Messages request with x-api-key, anthropic-version and exactly the granted tools', async () => {
    server.reply({ sse: fixture('anthropic/read-file.sse') });
    const out = await model().step(stepRequest());
    expect(out).toEqual({
      responseModel: 'claude-sonnet-4-5-20250929',
      kind: 'calls',
      usage: FIXTURE_USAGE,
      text: "I'll read the file.",
      calls: [{ id: 'c00000000', tool: 'read_file', args: { path: 'notes.txt' } }],
    });
    const [req] = server.requests;
    expect(req?.url).toBe('/v1/messages');
    expect(req?.headers['x-api-key']).toBe(API_KEY);
    expect(req?.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
    expect(req?.headers.authorization).toBeUndefined();
    expect(req?.raw).not.toContain(API_KEY);
    expect(req?.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'read notes.txt' }] }],
    });
    const tools = req?.body.tools as { name: string; input_schema: Record<string, unknown> }[];
    expect(tools.map((t) => t.name)).toEqual(['list_dir', 'read_file']);
    expect(tools[1]?.input_schema).toMatchObject({
      type: 'object',
      required: ['path'],
      additionalProperties: false,
    });
  });

  it('parallel tool_use blocks after a thinking block, in block order', async () => {
    server.reply({ sse: fixture('anthropic/parallel.sse') });
    expect(await model().step(stepRequest([{ role: 'user', text: 'x' }], 2))).toEqual({
      responseModel: 'claude-sonnet-4-5-20250929',
      kind: 'calls',
      usage: FIXTURE_USAGE,
      calls: [
        { id: 'c00002000', tool: 'read_file', args: { path: 'a.txt' } },
        { id: 'c00002001', tool: 'read_file', args: { path: 'b.txt' } },
      ],
    });
  });

  it('final text on end_turn', async () => {
    server.reply({ sse: fixture('anthropic/final.sse', { TEXT: 'hello' }) });
    expect(await model().step(stepRequest())).toEqual({
      responseModel: 'claude-sonnet-4-5-20250929',
      kind: 'final',
      text: 'The file says: hello',
      usage: FIXTURE_USAGE,
    });
  });

  it('overloaded_error inside the stream fails the step without a retry', async () => {
    server.reply(
      { sse: fixture('anthropic/overloaded-in-stream.sse') },
      { sse: fixture('anthropic/final.sse') },
    );
    const err = await failure(model().step(stepRequest()));
    expect(err.code).toBe(ModelErrorCode.stream);
    expect(err.message).toMatch(/overloaded_error.*overloaded, try again later/);
    expect(server.requests).toHaveLength(1);
  });

  it('HTTP 529 overloaded_error before the stream is retried, then succeeds', async () => {
    server.reply(
      { status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      { sse: fixture('anthropic/final.sse', { TEXT: 'ok' }) },
    );
    expect(await model().step(stepRequest())).toEqual({
      responseModel: 'claude-sonnet-4-5-20250929',
      kind: 'final',
      text: 'The file says: ok',
      usage: FIXTURE_USAGE,
    });
    expect(server.requests).toHaveLength(2);
  });

  it('max_tokens fails the step; a stream cut before message_stop fails without a retry', async () => {
    server.reply(
      { sse: fixture('anthropic/max-tokens.sse') },
      { sse: fixture('anthropic/cut.sse'), cut: true },
    );
    expect((await failure(model().step(stepRequest()))).code).toBe(ModelErrorCode.length);
    const cut = await failure(model().step(stepRequest()));
    expect(cut.message).toMatch(/discarded/);
    expect(server.requests).toHaveLength(2);
  });

  it('401 authentication_error: no retry, a message naming the secret and not the key', async () => {
    server.reply({
      status: 401,
      json: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
    });
    const err = await failure(model().step(stepRequest()));
    expect(err.message).toMatch(/HTTP 401 \(authentication_error\); check the API key in secret "model-key"/);
    expect(server.requests).toHaveLength(1);
  });

  it('echoes tool_use and tool_result blocks, all results of a step in one user message', async () => {
    server.reply({ sse: fixture('anthropic/final.sse', { TEXT: 'done' }) });
    await model().step(
      stepRequest(
        [
          { role: 'user', text: 'go' },
          {
            role: 'assistant',
            calls: [
              { id: 'c00000000', tool: 'read_file', args: { path: 'a' } },
              { id: 'c00000001', tool: 'read_file', args: { path: 'b' } },
            ],
          },
          {
            role: 'observation',
            observation: { kind: 'tool.result', callId: 'c00000000', tool: 'read_file', content: 'AAA' },
          },
          {
            role: 'observation',
            observation: {
              kind: 'tool.failed',
              callId: 'c00000001',
              tool: 'read_file',
              message: 'no such file',
            },
          },
        ],
        1,
      ),
    );
    expect(server.requests[0]?.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'c00000000', name: 'read_file', input: { path: 'a' } },
          { type: 'tool_use', id: 'c00000001', name: 'read_file', input: { path: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c00000000', content: 'AAA' },
          {
            type: 'tool_result',
            tool_use_id: 'c00000001',
            content: 'the tool failed: no such file',
            is_error: true,
          },
        ],
      },
    ]);
  });

  it('a whole (non-streamed) message is understood', async () => {
    server.reply({
      status: 200,
      json: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'n.txt' } },
        ],
        stop_reason: 'tool_use',
      },
    });
    expect(await model().step(stepRequest())).toEqual({
      kind: 'calls',
      text: 'Reading.',
      calls: [{ id: 'c00000000', tool: 'read_file', args: { path: 'n.txt' } }],
    });
  });

  it('names the model the server said answered (message_start.message.model), streamed or whole', async () => {
    server.reply({
      status: 200,
      json: {
        type: 'message',
        model: 'claude-served-2026',
        content: [{ type: 'text', text: 'hi' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 9, output_tokens: 2 },
      },
    });
    expect(await model().step(stepRequest())).toEqual({
      kind: 'final',
      text: 'hi',
      usage: { inputTokens: 9, outputTokens: 2 },
      responseModel: 'claude-served-2026',
    });
    // No model in the answer: none is named (never the one asked for).
    server.reply({
      status: 200,
      json: { type: 'message', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn' },
    });
    expect(await model().step(stepRequest())).toEqual({ kind: 'final', text: 'hi' });
  });
});

describe('anthropic provider, request checks', () => {
  it('a key with a line break fails with a message naming the header, not the key, and sends nothing', async () => {
    const { createSecretResolver, MemorySecretStore } = await import('../../runtime/secrets/index.ts');
    const { Redactor } = await import('../../store/index.ts');
    const req = {
      ...stepRequest(),
      secrets: createSecretResolver(new MemorySecretStore({ 'model-key': `${API_KEY}\n` }), new Redactor()),
    };
    const err = await failure(model().step(req));
    expect(err.code).toBe(ModelErrorCode.config);
    expect(err.message).toMatch(/header x-api-key has a line break/);
    expect(err.message).not.toContain(API_KEY);
    expect(server.requests).toHaveLength(0);
  });
});
