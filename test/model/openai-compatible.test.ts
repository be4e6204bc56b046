import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelErrorCode, ModelProviderError } from '../../actors/model/errors.ts';
import { OpenAiCompatibleModel } from '../../actors/model/openai-compatible.ts';
import type { HttpModelSettings } from '../../actors/model/settings.ts';
import { createSecretResolver } from '../../runtime/secrets/index.ts';
import { FakeModelServer, fixture } from './fake-server.ts';
import { API_KEY, stepRequest } from './helpers.ts';

/** The token usage every fixture of this provider reports. */
const FIXTURE_USAGE = { inputTokens: 212, outputTokens: 19 };

let server: FakeModelServer;
beforeEach(async () => {
  server = await FakeModelServer.start();
});
afterEach(async () => {
  await server.close();
});

function model(extra: Partial<HttpModelSettings> = {}): OpenAiCompatibleModel {
  return new OpenAiCompatibleModel({
    baseUrl: `${server.url}/v1`,
    model: 'gpt-4o-mini',
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

describe('openai-compatible provider', () => {
  it('sends a streamed Chat Completions request with exactly the granted tools and the key in Authorization only', async () => {
    server.reply({ sse: fixture('openai/read-file.sse') });
    const out = await model({ temperature: 0.2 }).step(stepRequest());
    expect(out).toEqual({
      responseModel: 'gpt-4o-mini-2024-07-18',
      kind: 'calls',
      usage: FIXTURE_USAGE,
      calls: [{ id: 'c00000000', tool: 'read_file', args: { path: 'notes.txt' } }],
    });
    const [req] = server.requests;
    expect(req?.url).toBe('/v1/chat/completions');
    expect(req?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req?.body).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      messages: [{ role: 'user', content: 'read notes.txt' }],
    });
    const tools = req?.body.tools as {
      type: string;
      function: { name: string; parameters: Record<string, unknown> };
    }[];
    expect(tools.map((t) => t.function.name)).toEqual(['list_dir', 'read_file']);
    expect(tools[1]?.function.parameters).toMatchObject({
      type: 'object',
      properties: { path: { type: 'string' }, startLine: { type: 'integer' } },
      required: ['path'],
      additionalProperties: false,
    });
    expect(JSON.stringify(tools)).not.toContain('$schema');
    // The key is in the header and nowhere in the body.
    expect(req?.raw).not.toContain(API_KEY);
  });

  it('joins split names and argument fragments', async () => {
    server.reply({ sse: fixture('openai/split-name.sse') });
    expect(await model().step(stepRequest())).toEqual({
      responseModel: 'gpt-4o-mini-2024-07-18',
      kind: 'calls',
      calls: [{ id: 'c00000000', tool: 'read_file', args: { path: 'notes.txt', startLine: 1 } }],
    });
  });

  it('gives calls the runtime\'s own ids when the server sends none (Ollama), with finish_reason "stop"', async () => {
    server.reply({ sse: fixture('openai/ollama-no-ids.sse') });
    expect(await model().step(stepRequest([{ role: 'user', text: 'x' }], 7))).toEqual({
      responseModel: 'qwen2.5:7b',
      kind: 'calls',
      calls: [
        { id: 'c00007000', tool: 'read_file', args: { path: 'notes.txt' } },
        { id: 'c00007001', tool: 'list_dir', args: { path: '.' } },
      ],
    });
  });

  it('keeps parallel calls apart by index however their fragments interleave', async () => {
    server.reply({ sse: fixture('openai/parallel.sse') });
    const out = await model().step(stepRequest());
    expect(out).toEqual({
      responseModel: 'gpt-4o-mini-2024-07-18',
      kind: 'calls',
      usage: FIXTURE_USAGE,
      calls: [
        { id: 'c00000000', tool: 'read_file', args: { path: 'a.txt' } },
        { id: 'c00000001', tool: 'read_file', args: { path: 'b.txt' } },
      ],
    });
  });

  it('reads llama.cpp --jinja streams (provider ids ignored, tiny fragments)', async () => {
    server.reply({ sse: fixture('openai/llamacpp-tool.sse') });
    expect(await model().step(stepRequest())).toEqual({
      responseModel: 'qwen2.5-7b-instruct-q4_k_m.gguf',
      kind: 'calls',
      calls: [{ id: 'c00000000', tool: 'read_file', args: { path: 'notes.txt' } }],
    });
  });

  it('returns the final text; a refusal is text and reasoning fields are dropped', async () => {
    server.reply({ sse: fixture('openai/final.sse', { TEXT: 'hello' }) });
    expect(await model().step(stepRequest())).toEqual({
      responseModel: 'gpt-4o-mini-2024-07-18',
      kind: 'final',
      text: 'The file says: hello',
      usage: FIXTURE_USAGE,
    });
    server.reply({ sse: fixture('openai/refusal-reasoning.sse') });
    expect(await model().step(stepRequest())).toEqual({
      kind: 'final',
      text: "I can't help with that.",
      responseModel: 'deepseek-r1',
    });
  });

  it('a huge index is a key in a map, not an array length', async () => {
    server.reply({ sse: fixture('openai/huge-index.sse') });
    // An array sized by the index would not fit in memory: the step returning is the proof.
    expect(await model().step(stepRequest())).toEqual({
      responseModel: 'gpt-4o-mini-2024-07-18',
      kind: 'calls',
      calls: [{ id: 'c00000000', tool: 'read_file', args: { path: 'notes.txt' } }],
    });
  });

  it('more tool calls than the bound fail the step', async () => {
    server.reply({ sse: fixture('openai/too-many-calls.sse') });
    const err = await failure(model().step(stepRequest()));
    expect(err.code).toBe(ModelErrorCode.protocol);
    expect(err.message).toMatch(/more than 64 tool calls/);
  });

  it('an error object after HTTP 200 fails the step, naming the provider code, without retrying', async () => {
    server.reply({ sse: fixture('openai/in-stream-error.sse') });
    const err = await failure(model().step(stepRequest()));
    expect(err.code).toBe(ModelErrorCode.stream);
    expect(err.message).toMatch(/internal_error/);
    expect(server.requests).toHaveLength(1);
  });

  it('a stream cut without [DONE] fails and is not retried (the partial call is discarded)', async () => {
    server.reply(
      { sse: fixture('openai/cut.sse'), cut: true },
      { sse: fixture('openai/final.sse', { TEXT: 'x' }) },
    );
    const err = await failure(model().step(stepRequest()));
    expect([ModelErrorCode.truncated, ModelErrorCode.connection]).toContain(err.code);
    expect(err.message).toMatch(/discarded/);
    expect(server.requests).toHaveLength(1);
  });

  it('a stream that ends cleanly but without [DONE] fails', async () => {
    server.reply({ sse: fixture('openai/no-done.sse') });
    const err = await failure(model().step(stepRequest()));
    expect(err.code).toBe(ModelErrorCode.truncated);
    expect(err.message).toMatch(/before \[DONE\]/);
  });

  it('finish_reason "length" and "content_filter" fail the step', async () => {
    server.reply({ sse: fixture('openai/length.sse') }, { sse: fixture('openai/content-filter.sse') });
    const length = await failure(model().step(stepRequest()));
    expect(length.code).toBe(ModelErrorCode.length);
    expect(length.message).toMatch(/maxTokens/);
    expect((await failure(model().step(stepRequest()))).code).toBe(ModelErrorCode.filtered);
  });

  it('429 with Retry-After waits as asked, then succeeds', async () => {
    server.reply(
      {
        status: 429,
        headers: { 'retry-after': '1' },
        json: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
      },
      { sse: fixture('openai/final.sse', { TEXT: 'ok' }) },
    );
    const started = Date.now();
    expect(await model().step(stepRequest())).toEqual({
      responseModel: 'gpt-4o-mini-2024-07-18',
      kind: 'final',
      text: 'The file says: ok',
      usage: FIXTURE_USAGE,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
  });

  it('500 then success; a connection reset then success', async () => {
    server.reply(
      { status: 500, json: { error: { message: 'boom', type: 'server_error' } } },
      { reset: true },
      {
        sse: fixture('openai/final.sse', { TEXT: 'ok' }),
      },
    );
    expect(await model().step(stepRequest())).toEqual({
      responseModel: 'gpt-4o-mini-2024-07-18',
      kind: 'final',
      text: 'The file says: ok',
      usage: FIXTURE_USAGE,
    });
    expect(server.requests).toHaveLength(3);
  });

  it('gives up after maxRetries with the last status in the message', async () => {
    server.reply(
      { status: 503, json: { error: { message: 'down' } } },
      { status: 503, json: { error: { message: 'down' } } },
    );
    const err = await failure(model({ maxRetries: 1 }).step(stepRequest()));
    expect(err.message).toMatch(/HTTP 503/);
    expect(server.requests).toHaveLength(2);
  });

  it('a Retry-After longer than the cap fails at once instead of waiting', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '3600' }, json: {} });
    const err = await failure(model().step(stepRequest()));
    expect(err.message).toMatch(/asked to wait 3600 s/);
    expect(server.requests).toHaveLength(1);
  });

  it('401 is not retried and says what to check, without the key or the provider message', async () => {
    server.reply({
      status: 401,
      json: {
        error: {
          message: `Incorrect API key provided: ${API_KEY.slice(0, 8)}****${API_KEY.slice(-4)}`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      },
    });
    const err = await failure(model().step(stepRequest()));
    expect(err.status).toBe(401);
    expect(err.message).toBe(
      `the model server 127.0.0.1:${new URL(server.url).port} answered HTTP 401 (invalid_api_key); check the API key in secret "model-key"`,
    );
    expect(err.message).not.toContain(API_KEY.slice(0, 8));
    expect(server.requests).toHaveLength(1);
  });

  it('a redirect is not followed (the key would go elsewhere) and says so, without a retry', async () => {
    server.reply({ status: 307, headers: { location: 'http://127.0.0.1:1/v1/chat/completions' } });
    const err = await failure(model().step(stepRequest()));
    expect(err.message).toMatch(/redirect, which the runtime does not follow.*set model.baseUrl/);
    expect(server.requests).toHaveLength(1);
  });

  it('404 points at baseUrl and the model; 400 mentions tool support', async () => {
    server.reply(
      { status: 404, json: { error: 'model "nope" not found, try pulling it first' } },
      { status: 400, json: {} },
    );
    const notFound = await failure(model({ model: 'nope' }).step(stepRequest()));
    expect(notFound.message).toMatch(/HTTP 404: model "nope" not found.*check model.baseUrl/);
    expect((await failure(model().step(stepRequest()))).message).toMatch(/--jinja/);
  });

  it('an unreachable server is a connection error naming what to check', async () => {
    const closed = server.url;
    await server.close();
    const err = await failure(
      new OpenAiCompatibleModel({ baseUrl: closed, model: 'm', maxRetries: 1, retryBaseMs: 5 }).step(
        stepRequest(),
      ),
    );
    expect(err.code).toBe(ModelErrorCode.connection);
    expect(err.message).toMatch(/could not be reached \(ECONNREFUSED\).*model.baseUrl/);
    server = await FakeModelServer.start();
  });

  it('a server that goes silent past timeoutMs fails the step', async () => {
    // Headers and one comment, then silence with the connection kept open.
    const silent = await import('node:http').then(
      (http) =>
        new Promise<{ url: string; close: () => void }>((resolve) => {
          const s = http.createServer((_req, res) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(': hello\n\n');
          });
          s.listen(0, '127.0.0.1', () =>
            resolve({
              url: `http://127.0.0.1:${(s.address() as { port: number }).port}`,
              close: () => {
                s.closeAllConnections();
                s.close();
              },
            }),
          );
        }),
    );
    try {
      const err = await failure(
        new OpenAiCompatibleModel({ baseUrl: silent.url, model: 'm', timeoutMs: 300, maxRetries: 0 }).step(
          stepRequest(),
        ),
      );
      expect(err.code).toBe(ModelErrorCode.connection);
      expect(err.message).toMatch(/sent nothing for 300 ms/);
    } finally {
      silent.close();
    }
  });

  it('echoes a transcript back: assistant tool_calls with the runtime ids, then one tool message per call', async () => {
    server.reply({ sse: fixture('openai/final.sse', { TEXT: 'done' }) });
    await model().step(
      stepRequest(
        [
          { role: 'user', text: 'go' },
          {
            role: 'assistant',
            text: 'reading',
            calls: [
              { id: 'c00000000', tool: 'read_file', args: { path: 'a' } },
              { id: 'c00000001', tool: 'write_file', args: { path: 'b', content: 'x' } },
            ],
          },
          {
            role: 'observation',
            observation: { kind: 'tool.result', callId: 'c00000000', tool: 'read_file', content: 'AAA' },
          },
          {
            role: 'observation',
            observation: {
              kind: 'tool.denied',
              callId: 'c00000001',
              tool: 'write_file',
              reason: 'mode_deny',
              message: 'no',
            },
          },
        ],
        1,
      ),
    );
    expect(server.requests[0]?.body.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'reading',
        tool_calls: [
          { id: 'c00000000', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
          {
            id: 'c00000001',
            type: 'function',
            function: { name: 'write_file', arguments: '{"path":"b","content":"x"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'c00000000', content: 'AAA' },
      { role: 'tool', tool_call_id: 'c00000001', content: "denied by the runtime's policy (mode_deny): no" },
    ]);
  });

  it('a key missing from the secret store fails with the secret name, before any request', async () => {
    const req = stepRequest();
    const err = await failure(model({ apiKey: { secret: 'other-key' } }).step(req));
    expect(err.code).toBe(ModelErrorCode.config);
    expect(err.message).toMatch(/secret "other-key" is not set in the memory secret store/);
    expect(server.requests).toHaveLength(0);
  });

  it('a key in a variable people already export ({ "env": "OPENAI_API_KEY" }) is sent; an unset one is named', async () => {
    server.reply({ sse: fixture('openai/read-file.sse') });
    const req = stepRequest();
    const withEnv = {
      ...req,
      secrets: createSecretResolver(undefined, req.redactor, { env: { OPENAI_API_KEY: API_KEY } }),
    };
    await model({ apiKey: { env: 'OPENAI_API_KEY' } }).step(withEnv);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const unset = { ...req, secrets: createSecretResolver(undefined, req.redactor, { env: {} }) };
    const err = await failure(model({ apiKey: { env: 'OPENAI_API_KEY' } }).step(unset));
    expect(err.code).toBe(ModelErrorCode.config);
    expect(err.message).toContain('environment variable OPENAI_API_KEY is not set: export OPENAI_API_KEY');
    expect(server.requests).toHaveLength(1);
  });

  it('names the model the server said answered; none, or a malformed name, names nothing', async () => {
    const answer = (model: unknown) => {
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ ...(model === undefined ? {} : { model }), choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      return { sse: [chunk({ content: 'hi' }, null), chunk({}, 'stop'), 'data: [DONE]\n\n'] };
    };
    server.reply(
      answer(undefined),
      answer('gpt-4o-mini\u0007'),
      answer('x\nname'),
      answer({ name: 'x' }),
      answer('m'.repeat(201)),
      answer(''),
      answer('served/model-7b:q4'),
    );
    const named: (string | undefined)[] = [];
    for (let i = 0; i < 7; i++) named.push((await model().step(stepRequest())).responseModel);
    // The request asked for gpt-4o-mini: it is never filled in for the server.
    expect(named).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      'served/model-7b:q4',
    ]);
  });

  it('a server that ignores stream: true and answers with one JSON completion is understood', async () => {
    server.reply({
      status: 200,
      json: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'x', type: 'function', function: { name: 'read_file', arguments: '{"path":"n.txt"}' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
    });
    expect(await model().step(stepRequest())).toEqual({
      kind: 'calls',
      calls: [{ id: 'c00000000', tool: 'read_file', args: { path: 'n.txt' } }],
    });
    server.reply({
      status: 200,
      json: { choices: [{ index: 0, message: { content: 'hi' }, finish_reason: 'length' }] },
    });
    expect((await failure(model().step(stepRequest()))).code).toBe(ModelErrorCode.length);
  });

  it('streams text deltas to onText as they arrive', async () => {
    server.reply({ sse: fixture('openai/final.sse', { TEXT: 'hello' }) });
    const deltas: string[] = [];
    await model().step({ ...stepRequest(), onText: (d) => deltas.push(d) });
    expect(deltas).toEqual(['The ', 'file ', 'says: ', 'hello']);
  });
});

describe('openai-compatible provider, content types', () => {
  it('a 200 answer that is an HTML page names its type and what to check', async () => {
    const html = await FakeModelServer.start();
    try {
      html.reply({
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        json: '<html>login</html>',
      });
      const err = await failure(
        new OpenAiCompatibleModel({ baseUrl: html.url, model: 'm', maxRetries: 0 }).step(stepRequest()),
      );
      expect(err.message).toMatch(
        /answered with "text\/html" instead of an event stream: check model.baseUrl/,
      );
    } finally {
      await html.close();
    }
  });
});
