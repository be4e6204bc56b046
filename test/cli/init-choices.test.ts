import { describe, expect, it } from 'vitest';
import { checkModelFlags, initModel, type ModelFlags } from '../../surfaces/cli/init/choices.ts';
import { UsageError } from '../../surfaces/cli/io.ts';
import { runCli } from '../../surfaces/cli/main.ts';

/** The usage error `checkModelFlags` throws for `flags` (fails the test when it throws none). */
function refusal(flags: ModelFlags): string {
  try {
    checkModelFlags(flags);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(flags)}`);
}

describe('snotra init model flags: every bad value is refused, naming its flag', () => {
  it.each<[string, ModelFlags, RegExp]>([
    [
      'an unknown provider',
      { provider: 'gemini' },
      /^--provider: "gemini" is not one of ollama, llama\.cpp,/,
    ],
    ['an empty provider', { provider: '' }, /^--provider: /],
    [
      'a provider with an escape sequence',
      { provider: 'x\u001b[2J' },
      /^--provider: the value is not one of/,
    ],
    ['not a URL', { provider: 'openai', baseUrl: 'localhost:8080' }, /^--base-url: expected an http/],
    ['garbage URL', { provider: 'openai', baseUrl: 'sk-not-a-url' }, /^--base-url: not a URL/],
    ['a file URL', { provider: 'ollama', baseUrl: 'file:///etc/passwd' }, /^--base-url: expected an http/],
    ['a URL with a query', { provider: 'openai', baseUrl: 'https://h/v1?k=1' }, /^--base-url: .*no query/],
    [
      'a URL with a fragment',
      { provider: 'openai', baseUrl: 'https://h/v1#x' },
      /^--base-url: .*no query or fragment/,
    ],
    ['an empty model', { provider: 'openai', model: '' }, /^--model: expected a model name/],
    ['a model with a space', { provider: 'openai', model: 'gpt 4' }, /^--model: /],
    ['a model with a control character', { provider: 'openai', model: 'a\u0007b' }, /^--model: /],
    ['a model of 201 characters', { provider: 'openai', model: 'm'.repeat(201) }, /^--model: /],
    ['--model without --provider', { model: 'gpt-4.1-mini' }, /^--model needs --provider/],
    ['--base-url without --provider', { baseUrl: 'http://127.0.0.1:1/v1' }, /^--base-url needs --provider/],
    [
      '--model with --provider none',
      { provider: 'none', model: 'x' },
      /^--model cannot go with --provider none/,
    ],
    [
      'openai-compatible without --base-url',
      { provider: 'openai-compatible', model: 'm' },
      /needs --base-url/,
    ],
    [
      'openai-compatible without --model',
      { provider: 'openai-compatible', baseUrl: 'http://h/v1' },
      /needs --model/,
    ],
    // Only a variable named like an API key may carry the key (a shell's other credentials never).
    [
      'a token variable',
      { provider: 'openai', apiKeyEnv: 'GITHUB_TOKEN' },
      /^--api-key-env: expected a variable named like an API key/,
    ],
    ['an AWS secret', { provider: 'openai', apiKeyEnv: 'AWS_SECRET_ACCESS_KEY' }, /^--api-key-env: /],
    ['a suffix evasion', { provider: 'openai', apiKeyEnv: 'OPENAI_API_KEY_BACKUP' }, /^--api-key-env: /],
    ['lower case', { provider: 'openai', apiKeyEnv: 'openai_api_key' }, /^--api-key-env: /],
    [
      'the runtime’s own variables',
      { provider: 'openai', apiKeyEnv: 'SNOTRA_SECRET_API_KEY' },
      /^--api-key-env: SNOTRA_\* variables/,
    ],
  ])('%s', (_name, flags, message) => {
    expect(refusal(flags)).toMatch(message);
  });

  it('a URL with credentials is refused without repeating them', () => {
    const message = refusal({
      provider: 'openai',
      baseUrl: 'https://user:hunter2-secret@api.example.com/v1',
    });
    expect(message).toMatch(/^--base-url: a URL with credentials is refused/);
    expect(message).not.toContain('hunter2');
    expect(refusal({ provider: 'openai', baseUrl: 'sk-proj-abcdef0123456789' })).not.toContain('sk-proj');
  });

  it('accepts the look-alikes of refused values', () => {
    expect(checkModelFlags({ provider: 'LLAMACPP' }).provider).toBe('llama.cpp');
    expect(checkModelFlags({ provider: 'Ollama', model: 'hf.co/org/name:Q4_K_M' })).toEqual({
      provider: 'ollama',
      baseUrl: null,
      model: 'hf.co/org/name:Q4_K_M',
      apiKeyEnv: null,
    });
    expect(
      checkModelFlags({
        provider: 'openai-compatible',
        baseUrl: 'http://127.0.0.1:1234/v1/',
        model: 'm',
        apiKeyEnv: 'GROQ_API_KEY',
      }),
    ).toEqual({
      provider: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:1234/v1',
      model: 'm',
      apiKeyEnv: 'GROQ_API_KEY',
    });
    expect(checkModelFlags({})).toEqual({ provider: null, baseUrl: null, model: null, apiKeyEnv: null });
  });

  it('through the command line a bad flag value exits 2 and names the flag, writing nothing', async () => {
    const err: string[] = [];
    const io = {
      stdout: () => {},
      stderr: (t: string) => void err.push(t),
      stdinLines: async function* () {},
    };
    // The folder does not exist: were the flags not checked first, the error would be about it.
    const code = await runCli(['init', '--provider', 'gpt'], io, '/nonexistent-snotra-init-folder');
    expect(code).toBe(2);
    expect(err.join('')).toMatch(/^snotra init: --provider: "gpt" is not one of/);
  });
});

describe('the model init writes for each provider', () => {
  it('local servers: their API root, no key unless named, a long silence limit', () => {
    expect(initModel('ollama', { baseUrl: null, model: 'qwen2.5:7b', apiKeyEnv: null })).toEqual({
      provider: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'qwen2.5:7b',
      timeoutMs: 600_000,
    });
    expect(
      initModel('llama.cpp', { baseUrl: null, model: 'm.gguf', apiKeyEnv: 'LOCAL_API_KEY' }),
    ).toMatchObject({
      baseUrl: 'http://127.0.0.1:8080/v1',
      apiKey: { env: 'LOCAL_API_KEY' },
    });
  });

  it('OpenAI and Anthropic read the key people already export', () => {
    expect(initModel('openai', { baseUrl: null, model: 'gpt-4.1-mini', apiKeyEnv: null })).toEqual({
      provider: 'openai-compatible',
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4.1-mini',
      apiKey: { env: 'OPENAI_API_KEY' },
    });
    expect(initModel('anthropic', { baseUrl: null, model: 'claude-sonnet-4-5', apiKeyEnv: null })).toEqual({
      provider: 'anthropic',
      baseUrl: 'https://api.anthropic.com/v1',
      model: 'claude-sonnet-4-5',
      apiKey: { env: 'ANTHROPIC_API_KEY' },
    });
  });
});
