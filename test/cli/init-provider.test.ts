/**
 * `snotra init` picks the model provider: named by flags, or asked on a terminal, with Ollama and
 * a llama.cpp server detected when they answer. The local servers here are real HTTP servers
 * speaking the servers' listing endpoints (`GET /api/tags`, `GET /v1/models`) and, for the first
 * run, the streamed Chat Completions API; `SNOTRA_INIT_OLLAMA_URL` / `SNOTRA_INIT_LLAMACPP_URL`
 * point detection at them (the documented way to look on another port).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config/load.ts';
import { initCommand } from '../../surfaces/cli/init.ts';
import { CommandFailure, type CliIo } from '../../surfaces/cli/io.ts';
import type { ApprovalTerminal } from '../../surfaces/cli/run/prompt.ts';
import { FakeModelServer, fixture, type FakeReply } from '../model/fake-server.ts';
import { eventually } from '../support/runtime.ts';
import { startSnotra } from '../support/snotra-process.ts';
import { BIN, startOnPty, type LiveCli } from './run-helpers.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-init-provider-')));
let ollama: FakeModelServer;
let llama: FakeModelServer;
/** An address where nothing listens (port 1: refused at once). */
const dead = 'http://127.0.0.1:1';
/** What the fake Ollama lists; each test sets its own. */
let tags: FakeReply;

beforeAll(async () => {
  ollama = await FakeModelServer.start();
  ollama.route = (req) => (req.method === 'GET' && req.url === '/api/tags' ? tags : undefined);
  llama = await FakeModelServer.start();
  llama.route = (req) => {
    if (req.method === 'GET' && req.url === '/v1/models')
      return {
        status: 200,
        json: { object: 'list', data: [{ id: 'qwen2.5-7b-instruct-q4_k_m.gguf', object: 'model' }] },
      };
    if (req.method === 'POST' && req.url === '/v1/chat/completions')
      return { sse: fixture('openai/final.sse', { TEXT: 'hello from llama.cpp' }) };
    return undefined;
  };
});
afterAll(async () => {
  await ollama.close();
  await llama.close();
  rmSync(base, { recursive: true, force: true });
});

let n = 0;
function folder(): string {
  const dir = join(base, `f${n++}`);
  mkdirSync(dir);
  return dir;
}

const models = (...names: string[]): FakeReply => ({
  status: 200,
  json: { models: names.map((name) => ({ name, model: name, size: 4_683_087_332 })) },
});

/** The environment init runs in: detection pointed at the test's servers, no key exported. */
function envFor(over: Record<string, string> = {}) {
  return {
    HOME: base,
    XDG_STATE_HOME: join(base, 'state-home'),
    SNOTRA_INIT_OLLAMA_URL: ollama.url,
    SNOTRA_INIT_LLAMACPP_URL: llama.url,
    ...over,
  };
}

/** A terminal that answers from a list (null: end of input) and keeps what was shown. */
function scriptedTerminal(answers: (string | null)[]) {
  const shown: string[] = [];
  const term: ApprovalTerminal = {
    write: (t) => void shown.push(t),
    ask: async (question) => {
      shown.push(question);
      const a = answers.shift();
      if (a === undefined) throw new Error(`no answer left for: ${question}`);
      return a;
    },
    close: () => {},
  };
  return { term, shown, answers };
}

function ioWith(term: ApprovalTerminal | null) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    stdinLines: async function* () {},
    approvalTerminal: () => term,
  };
  return { io, out, err };
}

const onlyEnv = async () => ({ backend: 'env' as const, reason: 'no keyring in this test' });

async function init(argv: string[], term: ApprovalTerminal | null = null, env = envFor()) {
  const dir = folder();
  const r = ioWith(term);
  const code = await initCommand(['--state-dir', 'state', ...argv], r.io, dir, env, onlyEnv);
  const file = join(dir, 'snotra.config.json');
  return { ...r, code, file, dir };
}

function modelOf(file: string): unknown {
  const loaded = loadConfig(file, { env: envFor() });
  return loaded.config.agents.assistant?.model;
}

describe('snotra init --provider: the model from flags', () => {
  it('ollama: the first model the server lists, at the address it answered', async () => {
    tags = models('qwen2.5:7b', 'llama3.2:latest');
    const r = await init(['--provider', 'ollama']);
    expect(r.code).toBe(0);
    expect(modelOf(r.file)).toEqual({
      provider: 'openai-compatible',
      baseUrl: `${ollama.url}/v1`,
      model: 'qwen2.5:7b',
      timeoutMs: 600_000,
    });
    expect(r.out.join('')).toContain(`model: qwen2.5:7b (openai-compatible) at ${ollama.url}/v1\n`);
    expect(ollama.requests.at(-1)).toMatchObject({ method: 'GET', url: '/api/tags' });
  });

  it('a name that is not plain printable text is never offered or written (escape sequences, spaces)', async () => {
    tags = models('evil\u001b]0;pwned\u0007', 'with space', 'ok:1b');
    const r = await init(['--provider', 'ollama']);
    expect(r.code).toBe(0);
    expect(modelOf(r.file)).toMatchObject({ model: 'ok:1b' });
    const term = scriptedTerminal(['1']);
    const asked = await init([], term.term);
    expect(asked.code).toBe(0);
    const shown = term.shown.join('');
    for (const bad of ['evil', '\u001b', 'with space']) expect(shown).not.toContain(bad);
  });

  it('a server that does not answer, lists no model or answers something else: exit 1, naming the address and the fix; nothing written', async () => {
    const cases: [Record<string, string>, string[], RegExp][] = [
      [
        { SNOTRA_INIT_LLAMACPP_URL: dead },
        ['--provider', 'llama.cpp'],
        new RegExp(`nothing answers GET ${dead}/v1/models.*name the model with --model`),
      ],
      [{}, ['--provider', 'ollama'], /lists no model \(ollama pull qwen2\.5:7b\); or name one with --model/],
      [
        { SNOTRA_INIT_OLLAMA_URL: llama.url },
        ['--provider', 'ollama'],
        /GET .*\/api\/tags answered HTTP 599/,
      ],
    ];
    tags = models();
    for (const [env, argv, message] of cases) {
      const dir = folder();
      const r = ioWith(null);
      const run = initCommand(['--state-dir', 'state', ...argv], r.io, dir, envFor(env), onlyEnv);
      await expect(run).rejects.toBeInstanceOf(CommandFailure);
      await expect(run).rejects.toThrow(message);
      expect(existsSync(join(dir, 'snotra.config.json'))).toBe(false);
    }
  });

  it('--model needs no server; --base-url moves the address; a bad address variable is named', async () => {
    const r = await init(['--provider', 'llama.cpp', '--model', 'mine.gguf', '--base-url', `${dead}/v1`]);
    expect(r.code).toBe(0);
    expect(modelOf(r.file)).toMatchObject({ baseUrl: `${dead}/v1`, model: 'mine.gguf' });
    const bad = init(['--provider', 'ollama'], null, envFor({ SNOTRA_INIT_OLLAMA_URL: 'ftp://x' }));
    await expect(bad).rejects.toThrow(/^the environment variable SNOTRA_INIT_OLLAMA_URL: expected an http/);
  });

  it('openai and anthropic: the default model, the key from the variable people export, and whether it is set', async () => {
    const openai = await init(['--provider', 'openai']);
    expect(modelOf(openai.file)).toEqual({
      provider: 'openai-compatible',
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4.1-mini',
      apiKey: { env: 'OPENAI_API_KEY' },
    });
    expect(openai.out.join('')).toContain(
      'key: read from OPENAI_API_KEY, which is not set here: export OPENAI_API_KEY=... before snotra run',
    );
    const key = 'sk-ant-init-test-4f1e9a0c';
    const anthropic = await init(
      ['--provider', 'anthropic', '--model', 'claude-opus-4-1'],
      null,
      envFor({ ANTHROPIC_API_KEY: key }),
    );
    expect(modelOf(anthropic.file)).toMatchObject({
      provider: 'anthropic',
      model: 'claude-opus-4-1',
      apiKey: { env: 'ANTHROPIC_API_KEY' },
    });
    expect(anthropic.out.join('')).toContain('key: read from ANTHROPIC_API_KEY (set in this shell)');
    expect(anthropic.out.join('') + readFileSync(anthropic.file, 'utf8')).not.toContain(key);
  });

  it('without --provider and without a terminal: no model, as before, and the flag to add one', async () => {
    const r = await init([]);
    expect(r.code).toBe(0);
    expect(modelOf(r.file)).toBeUndefined();
    expect(r.out.join('')).toContain('model: none (add one with: snotra init --force --provider ollama|');
  });
});

describe('snotra init on a terminal: the provider question', () => {
  it('offers the servers that answered first, then OpenAI, Anthropic, a URL, none; asks which model when there are several', async () => {
    tags = models('qwen2.5:7b', 'llama3.2:latest');
    const t = scriptedTerminal(['1', '2']);
    const r = await init([], t.term);
    expect(r.code).toBe(0);
    const shown = t.shown.join('');
    expect(shown).toContain(`1) Ollama at ${ollama.url}/v1 (qwen2.5:7b, llama3.2:latest)`);
    expect(shown).toContain(`2) llama.cpp server at ${llama.url}/v1 (qwen2.5-7b-instruct-q4_k_m.gguf)`);
    expect(shown).toContain('3) OpenAI (key from OPENAI_API_KEY)');
    expect(shown).toContain('6) None for now');
    expect(modelOf(r.file)).toMatchObject({ baseUrl: `${ollama.url}/v1`, model: 'llama3.2:latest' });
  });

  it('a server that does not answer is said and not offered; bad answers are asked again; Enter takes the default model', async () => {
    const t = scriptedTerminal(['9', 'openai', '2', '']);
    const r = await init([], t.term, envFor({ SNOTRA_INIT_OLLAMA_URL: dead }));
    expect(r.code).toBe(0);
    const shown = t.shown.join('');
    expect(shown).toContain(`no Ollama: nothing answers GET ${dead}/api/tags`);
    expect(shown).toContain('1) llama.cpp server at');
    expect(shown.match(/type a number from 1 to 5/g)).toHaveLength(2);
    expect(modelOf(r.file)).toMatchObject({
      provider: 'openai-compatible',
      model: 'gpt-4.1-mini',
      apiKey: { env: 'OPENAI_API_KEY' },
    });
  });

  it('another OpenAI-compatible URL: its root, model and key variable, each checked', async () => {
    const t = scriptedTerminal([
      '3',
      'http://u:p@h/v1',
      'https://openrouter.ai/api/v1',
      'x/y',
      'GITHUB_TOKEN',
      'OPENROUTER_API_KEY',
    ]);
    const r = await init(
      [],
      t.term,
      envFor({ SNOTRA_INIT_OLLAMA_URL: dead, SNOTRA_INIT_LLAMACPP_URL: dead }),
    );
    expect(r.code).toBe(0);
    expect(t.shown.join('')).toContain('the API root: a URL with credentials is refused');
    expect(t.shown.join('')).not.toContain('u:p@');
    expect(modelOf(r.file)).toEqual({
      provider: 'openai-compatible',
      baseUrl: 'https://openrouter.ai/api/v1',
      model: 'x/y',
      apiKey: { env: 'OPENROUTER_API_KEY' },
    });
  });

  it('end of input or Ctrl-C (null), or three bad answers: nothing is written', async () => {
    for (const answers of [[null], ['7', '8', '9'], ['1', null]]) {
      tags = models('a:1', 'b:2');
      const dir = folder();
      const t = scriptedTerminal(answers);
      const run = initCommand(['--state-dir', 'state'], ioWith(t.term).io, dir, envFor(), onlyEnv);
      await expect(run).rejects.toThrow('no provider chosen; nothing written');
      expect(existsSync(join(dir, 'snotra.config.json'))).toBe(false);
    }
  });
});

describe('snotra init on a real terminal (pseudo-terminal, util-linux script)', () => {
  async function seen(cli: LiveCli, needle: string): Promise<void> {
    try {
      await eventually(() => cli.out().includes(needle), 60_000, needle);
    } catch (err) {
      throw new Error(`${(err as Error).message}; output so far:\n${cli.out()}`);
    }
  }

  it('asks on the terminal, takes the typed answers and writes the model chosen', async () => {
    tags = models('qwen2.5:7b', 'llama3.2:latest');
    const dir = folder();
    const config = join(dir, 'snotra.config.json');
    const cli = startOnPty([process.execPath, BIN, 'init', '--config', config, '--state-dir', 'state'], {
      SNOTRA_INIT_OLLAMA_URL: ollama.url,
      SNOTRA_INIT_LLAMACPP_URL: dead,
      XDG_STATE_HOME: base,
    });
    await seen(cli, 'Choose [1-5, Enter for 1]: ');
    cli.child.stdin?.write('\r');
    await seen(cli, 'Which model? [1-2, Enter for 1] ');
    cli.child.stdin?.write('2\r');
    expect(await cli.exited, cli.out()).toBe(0);
    expect(cli.out()).toContain(`1) Ollama at ${ollama.url}/v1 (qwen2.5:7b, llama3.2:latest)`);
    expect(cli.out()).toContain(`model: llama3.2:latest (openai-compatible) at ${ollama.url}/v1`);
    expect(modelOf(config)).toMatchObject({ baseUrl: `${ollama.url}/v1`, model: 'llama3.2:latest' });
  }, 90_000);
});

describe('a first real run in two commands after the install', () => {
  it('snotra init --provider llama.cpp, then snotra run: the answer comes from the local server', async () => {
    const dir = folder();
    const config = join(dir, 'snotra.config.json');
    const env = { SNOTRA_INIT_LLAMACPP_URL: llama.url, XDG_STATE_HOME: join(base, 'xdg') };
    const initP = startSnotra(
      ['init', '--config', config, '--state-dir', 'state', '--provider', 'llama.cpp'],
      env,
    );
    expect(await initP.exited, initP.stderr()).toBe(0);
    expect(initP.stdout()).toContain('model: qwen2.5-7b-instruct-q4_k_m.gguf (openai-compatible)');
    const run = startSnotra(['run', '--config', config, 'say hello'], env);
    const timer = setTimeout(() => run.child.kill('SIGKILL'), 90_000);
    const code = await run.exited;
    clearTimeout(timer);
    expect(code, run.stderr()).toBe(0);
    expect(run.stdout()).toContain('hello from llama.cpp');
    const asked = llama.requests.filter((r) => r.method === 'POST');
    expect(asked.at(-1)?.body.model).toBe('qwen2.5-7b-instruct-q4_k_m.gguf');
  }, 120_000);
});
