import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import { FakeModelServer, fixture, type SeenRequest } from '../model/fake-server.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

const KEY = 'sk-proj-Sn4Rk2Qd9Xm4Lp8Tn3Hs6Jb1Fc5Gz0Yb';
const INSTRUCTIONS = 'Answer in one short sentence. Cite the file you read.';

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

/** The user messages and the tool results of a request, as plain strings, per provider. */
const PROVIDERS = [
  {
    provider: 'openai-compatible',
    dir: 'openai',
    system: (r: SeenRequest) => {
      const first = (r.body.messages as { role: string; content: string }[])[0];
      return first?.role === 'system' ? first.content : null;
    },
    /** The conversation as role:text lines (tool calls as `call:<id>:<tool>`, results as `result:<id>:<text>`). */
    lines: (r: SeenRequest) =>
      (
        r.body.messages as {
          role: string;
          content: string;
          tool_calls?: { id: string; function: { name: string } }[];
          tool_call_id?: string;
        }[]
      )
        .filter((m) => m.role !== 'system')
        .flatMap((m) => {
          if (m.role === 'tool') return [`result:${m.tool_call_id}:${m.content}`];
          const calls = (m.tool_calls ?? []).map((c) => `call:${c.id}:${c.function.name}`);
          return [...(m.content === '' ? [] : [`${m.role}:${m.content}`]), ...calls];
        }),
  },
  {
    provider: 'anthropic',
    dir: 'anthropic',
    system: (r: SeenRequest) => (typeof r.body.system === 'string' ? r.body.system : null),
    lines: (r: SeenRequest) =>
      (r.body.messages as { role: string; content: Record<string, unknown>[] }[])
        .flatMap((m) =>
          m.content.map((b) => {
            if (b.type === 'tool_use') return `call:${String(b.id)}:${String(b.name)}`;
            if (b.type === 'tool_result') return `result:${String(b.tool_use_id)}:${String(b.content)}`;
            return `${m.role}:${String(b.text)}`;
          }),
        )
        // The fixture's text before its tool call (the OpenAI one has none).
        .filter((line) => line !== "assistant:I'll read the file."),
  },
] as const;

function assistantTurns(req: SeenRequest): number {
  return ((req.body.messages ?? []) as { role: string }[]).filter((m) => m.role === 'assistant').length;
}

describe.each(PROVIDERS)('a durable conversation with the $provider provider', (p) => {
  async function boot(
    extra: Record<string, unknown> = {},
  ): Promise<{ srv: FakeModelServer; fx: RuntimeFixture }> {
    server = await FakeModelServer.start();
    fx = runtimeFixture({
      agents: {
        assistant: {
          mode: 'allow',
          tools: ['read_file', 'list_dir'],
          instructions: INSTRUCTIONS,
          model: {
            provider: p.provider,
            baseUrl: `${server.url}/v1`,
            model: 'test-model',
            apiKey: { secret: 'model-key' },
            ...extra,
          },
        },
      },
    });
    return { srv: server, fx };
  }

  const start = (f: RuntimeFixture) =>
    f.start(modelFromConfig(f.loaded, { retryBaseMs: 10 }), {
      secretStore: new MemorySecretStore({ 'model-key': KEY }),
    });

  it('the second message, after a restart, is sent after the first exchange (tool call and result included), with the system prompt', async () => {
    const { srv, fx: f } = await boot();
    writeFileSync(join(f.project, 'notes.txt'), 'the password hint is tangerine\n');
    // First message: read_file, then the answer. Second message: the answer at once.
    let message = 0;
    srv.route = (req) => {
      if (message === 0 && assistantTurns(req) === 0) return { sse: fixture(`${p.dir}/read-file.sse`) };
      return { sse: fixture(`${p.dir}/final.sse`, { TEXT: message === 0 ? 'tangerine' : 'yes' }) };
    };
    rt = await start(f);
    const first = await rt.runs.submit('assistant', 'what does notes.txt say?', { sessionId: 'notes' });
    expect(await rt.waitForRun(first)).toMatchObject({
      status: 'completed',
      text: 'The file says: tangerine',
    });
    await rt.stop();
    rt = null;

    message = 1;
    rt = await start(f);
    const second = await rt.runs.submit('assistant', 'is that a fruit?', { sessionId: 'notes' });
    expect(await rt.waitForRun(second)).toMatchObject({ status: 'completed' });

    expect(srv.requests).toHaveLength(3);
    const last = srv.requests[2] as SeenRequest;
    const lines = p.lines(last);
    // The first exchange, in order, with its call renamed to a history id and its result kept.
    expect(lines[0]).toBe('user:what does notes.txt say?');
    expect(lines[1]).toBe('call:h00000000:read_file');
    expect(lines[2]).toMatch(/^result:h00000000:.*tangerine/);
    expect(lines[3]).toBe('assistant:The file says: tangerine');
    expect(lines[4]).toBe('user:is that a fruit?');
    expect(lines).toHaveLength(5);
    // The runtime's preamble, then the agent's instructions, in every request.
    for (const req of srv.requests) {
      const system = p.system(req) ?? '';
      expect(system).toContain('You are the agent "assistant"');
      expect(system).toContain(`${f.project} (read-write, primary)`);
      expect(system).toContain('Mode: allow');
      expect(system).toContain('Tools: list_dir, read_file.');
      expect(system.endsWith(`\n\n${INSTRUCTIONS}`)).toBe(true);
      expect(req.raw).not.toContain(KEY);
    }
    // The session holds both runs once each.
    const session = rt.sessions.get('notes');
    expect(session).toMatchObject({ runs: 2, activeRunId: null, title: 'what does notes.txt say?' });
    const stored = rt.sessions.messages('notes').map((m) => (m.entry as { role: string }).role);
    expect(stored).toEqual(['user', 'assistant', 'observation', 'assistant', 'user', 'assistant']);
  });

  it('at a small contextTokens the oldest tool result is elided to a stub and the last user message is sent intact', async () => {
    const { srv, fx: f } = await boot({ contextTokens: 2000 });
    // A 24 kB file: its result alone is ~6000 estimated tokens.
    writeFileSync(join(f.project, 'notes.txt'), `${'lorem ipsum dolor sit amet '.repeat(900)}tangerine\n`);
    let message = 0;
    srv.route = (req) => {
      if (message === 0 && assistantTurns(req) === 0) return { sse: fixture(`${p.dir}/read-file.sse`) };
      return { sse: fixture(`${p.dir}/final.sse`, { TEXT: message === 0 ? 'tangerine' : 'ok' }) };
    };
    rt = await start(f);
    const first = await rt.runs.submit('assistant', 'what does notes.txt say?', { sessionId: 'big' });
    expect(await rt.waitForRun(first)).toMatchObject({ status: 'completed' });
    message = 1;
    const longQuestion = `and now, word for word: ${'why? '.repeat(200)}`;
    const second = await rt.runs.submit('assistant', longQuestion, { sessionId: 'big' });
    expect(await rt.waitForRun(second)).toMatchObject({ status: 'completed' });

    // Within the first run the result was unanswered, so it went out whole.
    expect(p.lines(srv.requests[1] as SeenRequest)[2]).toContain('lorem ipsum');
    const lines = p.lines(srv.requests[2] as SeenRequest);
    expect(lines[0]).toBe('user:what does notes.txt say?');
    expect(lines[2]).toMatch(/^result:h00000000:\[elided: read_file notes\.txt, 2\d kB\]$/);
    expect(lines.at(-1)).toBe(`user:${longQuestion}`);
    expect((srv.requests[2] as SeenRequest).raw).not.toContain('lorem ipsum');
    expect(p.system(srv.requests[2] as SeenRequest)).toContain(INSTRUCTIONS);
    // The stored session keeps the whole result: eliding is for the request only.
    const observation = rt.sessions.messages('big')[2]?.entry as { observation: { content: unknown } };
    expect(JSON.stringify(observation.observation.content)).toContain('lorem ipsum');
  });
});
