import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AnthropicModel } from '../../actors/model/anthropic.ts';
import { parseConfig } from '../../runtime/config/load.ts';
import { DEFAULT_BASE_URLS, httpSettings, modelFromConfig } from '../../runtime/config/adapters/models.ts';
import { secretStoreFromConfig } from '../../runtime/config/adapters/secrets.ts';
import { ConfigError } from '../../runtime/config/errors.ts';
import { FakeModelServer, fixture } from './fake-server.ts';
import { API_KEY, stepRequest } from './helpers.ts';

// Config loading checks that roots exist: a real folder stands for the config's.
const CFG = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-model-cfg-')));
afterAll(() => rmSync(CFG, { recursive: true, force: true }));

function load(model: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return parseConfig(
    JSON.stringify({ agents: { a: { model } }, ...extra }),
    join(CFG, 'snotra.config.json'),
    CFG,
  );
}

describe('model config', () => {
  it('accepts both network providers with every documented field', () => {
    const loaded = load({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      apiKey: { secret: 'anthropic-key' },
      headers: { 'anthropic-beta': 'tools-2024', 'x-extra': { secret: 'extra' } },
      timeoutMs: 5000,
      maxRetries: 3,
      temperature: 0.5,
      maxTokens: 1000,
    });
    const def = loaded.config.agents.a?.model;
    expect(def).toBeDefined();
    expect(httpSettings('a', def!, 'f')).toEqual({
      baseUrl: DEFAULT_BASE_URLS.anthropic,
      model: 'claude-sonnet-4-5',
      apiKey: { secret: 'anthropic-key' },
      headers: { 'anthropic-beta': 'tools-2024', 'x-extra': { secret: 'extra' } },
      timeoutMs: 5000,
      maxRetries: 3,
      temperature: 0.5,
      maxTokens: 1000,
    });
    expect(() => modelFromConfig(loaded)).not.toThrow();
  });

  it('rejects an unknown provider and a bad field naming the JSON path', () => {
    expect(() => load({ provider: 'openai', model: 'x' })).toThrow(/agents\.a\.model\.provider/);
    expect(() => load({ provider: 'anthropic', model: 'x', maxRetries: -1 })).toThrow(
      /agents\.a\.model\.maxRetries/,
    );
    expect(() => load({ provider: 'anthropic', model: 'x', apiKey: 'sk-inline' })).toThrow(
      /agents\.a\.model\.apiKey/,
    );
  });

  it.each([
    [{ provider: 'openai-compatible' }, /agents\.a\.model\.model: expected the model name/],
    [
      { provider: 'openai-compatible', model: 'm', baseUrl: 'not a url' },
      /baseUrl: expected an http\(s\) URL/,
    ],
    [{ provider: 'openai-compatible', model: 'm', baseUrl: 'file:///etc/passwd' }, /expected http or https/],
    [
      { provider: 'openai-compatible', model: 'm', baseUrl: 'https://u:p@api.example.com/v1' },
      /must not contain credentials/,
    ],
    [
      { provider: 'openai-compatible', model: 'm', baseUrl: 'https://api.example.com/v1?key=abc' },
      /query or fragment/,
    ],
    [
      {
        provider: 'openai-compatible',
        model: 'm',
        baseUrl: 'http://10.0.0.5:8000/v1',
        apiKey: { secret: 'k' },
      },
      /plain http to 10\.0\.0\.5 would send the API key unencrypted/,
    ],
    [
      { provider: 'openai-compatible', model: 'm', headers: { 'Content-Type': 'text/plain' } },
      /headers\.Content-Type: set by the runtime/,
    ],
  ])('refuses unusable settings: %j', (model, message) => {
    expect(() => modelFromConfig(load(model))).toThrow(message);
  });

  it('allows plain http with a key to loopback servers, and without a key anywhere', () => {
    for (const baseUrl of ['http://127.0.0.1:8080/v1', 'http://localhost:11434/v1', 'http://[::1]:8000/v1']) {
      expect(() =>
        modelFromConfig(
          load({ provider: 'openai-compatible', model: 'm', baseUrl, apiKey: { secret: 'k' } }),
        ),
      ).not.toThrow();
    }
    expect(() =>
      modelFromConfig(
        load({ provider: 'openai-compatible', model: 'm', baseUrl: 'http://10.0.0.5:8000/v1' }),
      ),
    ).not.toThrow();
  });

  it('refuses a config whose scheduled task or goal loop names an agent without a model, naming each place; a sub-agent without one is fine', () => {
    const config = (agents: Record<string, unknown>) =>
      parseConfig(
        JSON.stringify({
          agents,
          surfaces: {
            scheduled: [{ id: 'nightly', agent: 'cron', cron: '0 3 * * *', message: 'go' }],
            goalLoops: [{ id: 'g', agent: 'looper', objective: 'keep going' }],
          },
        }),
        join(CFG, 'snotra.config.json'),
        CFG,
      );
    const model = { provider: 'openai-compatible', model: 'm', baseUrl: 'http://127.0.0.1:9/v1' };
    const refused = (() => {
      try {
        modelFromConfig(config({ cron: {}, looper: {}, helper: {} }));
        return null;
      } catch (err) {
        return err as ConfigError;
      }
    })();
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused?.code).toBe('invalid_config');
    expect(refused?.message).toContain('snotra.config.json');
    expect(refused?.problems).toEqual([
      expect.stringMatching(
        /^surfaces\.scheduled\[0\]\.agent: agent "cron" has no model;.*set agents\.cron\.model/,
      ),
      expect.stringMatching(
        /^surfaces\.goalLoops\[0\]\.agent: agent "looper" has no model;.*set agents\.looper\.model/,
      ),
    ]);
    // With their models: accepted; `helper`, named by no task or loop (a sub-agent), needs none.
    expect(() => modelFromConfig(config({ cron: { model }, looper: { model }, helper: {} }))).not.toThrow();
  });

  it('routes each agent to its own provider', async () => {
    const server = await FakeModelServer.start();
    try {
      const loaded = parseConfig(
        JSON.stringify({
          agents: {
            o: { model: { provider: 'openai-compatible', model: 'm', baseUrl: `${server.url}/v1` } },
            c: { model: { provider: 'anthropic', model: 'm', baseUrl: `${server.url}/v1` } },
            none: {},
          },
        }),
        join(CFG, 'snotra.config.json'),
        CFG,
      );
      const provider = modelFromConfig(loaded);
      server.reply(
        { sse: fixture('openai/final.sse', { TEXT: 'o' }) },
        { sse: fixture('anthropic/final.sse', { TEXT: 'c' }) },
      );
      expect(await provider.step({ ...stepRequest(), agentId: 'o' })).toEqual({
        kind: 'final',
        text: 'The file says: o',
        usage: { inputTokens: 212, outputTokens: 19 },
        responseModel: 'gpt-4o-mini-2024-07-18',
      });
      expect(await provider.step({ ...stepRequest(), agentId: 'c' })).toEqual({
        kind: 'final',
        text: 'The file says: c',
        usage: { inputTokens: 472, outputTokens: 89 },
        responseModel: 'claude-sonnet-4-5-20250929',
      });
      expect(server.requests.map((r) => r.url)).toEqual(['/v1/chat/completions', '/v1/messages']);
      await expect(provider.step({ ...stepRequest(), agentId: 'none' })).rejects.toThrow(
        /set agents\.none\.model/,
      );
    } finally {
      await server.close();
    }
  });

  it('resolves secret header values at request time and keeps the key header authoritative', async () => {
    const server = await FakeModelServer.start();
    try {
      server.reply({ sse: fixture('anthropic/final.sse', { TEXT: 'x' }) });
      await new AnthropicModel({
        baseUrl: server.url,
        model: 'm',
        apiKey: { secret: 'model-key' },
        headers: { 'X-Api-Key': 'configured-must-not-win', 'x-team': { secret: 'model-key' } },
      }).step(stepRequest());
      expect(server.requests[0]?.headers['x-api-key']).toBe(API_KEY);
      expect(server.requests[0]?.headers['x-team']).toBe(API_KEY);
    } finally {
      await server.close();
    }
  });
});

describe('secrets.backend', () => {
  it('defaults to os; env takes SNOTRA_SECRET_* and removes them from the environment', async () => {
    expect(load({ provider: 'scripted', script: 'x.json' }).config.secrets.backend).toBe('os');
    const env: Record<string, string | undefined> = { SNOTRA_SECRET_OPENAI_KEY: 'sk-env', PATH: '/bin' };
    const store = secretStoreFromConfig(
      load({ provider: 'scripted', script: 'x.json' }, { secrets: { backend: 'env' } }),
      {
        env,
      },
    );
    expect(store.kind).toBe('env');
    expect(await store.get('openai-key')).toBe('sk-env');
    expect(env).toEqual({ PATH: '/bin' });
    expect(() => load({ provider: 'scripted' }, { secrets: { backend: 'file' } })).toThrow(
      /secrets\.backend/,
    );
  });

  it('os opens the keyring only at first use, and a missing keyring fails that use with its message', async () => {
    let opened = 0;
    const store = secretStoreFromConfig(load({ provider: 'scripted', script: 'x.json' }), {
      keyring: {
        factory: () => {
          opened++;
          throw new Error('no Secret Service on this machine');
        },
      },
    });
    expect(opened).toBe(0);
    await expect(store.get('openai-key')).rejects.toThrow(/no Secret Service|unavailable/);
    expect(opened).toBeGreaterThan(0);
  });
});
