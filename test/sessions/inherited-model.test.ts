import { afterEach, describe, expect, it } from 'vitest';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { FakeModelServer, type SeenRequest } from '../model/fake-server.ts';
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

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const final = (text: string) => [chunk({ content: text }), chunk({}, 'stop'), 'data: [DONE]\n\n'];
const spawn = [
  chunk({
    tool_calls: [
      {
        index: 0,
        id: 'x',
        type: 'function',
        function: {
          name: 'spawn_agent',
          arguments: JSON.stringify({ profile: 'explorer', task: 'list the files' }),
        },
      },
    ],
  }),
  chunk({}, 'tool_calls'),
  'data: [DONE]\n\n',
];

const systemOf = (r: SeenRequest): string =>
  ((r.body.messages as { role: string; content: string }[])[0]?.content ?? '').split('\n')[0] ?? '';

describe('a sub-agent without a model of its own', () => {
  it("the Explorer uses its parent's model, with its own preamble and only its tools", async () => {
    server = await FakeModelServer.start();
    fx = runtimeFixture({
      agents: {
        lead: {
          mode: 'allow',
          tools: ['read_file', 'list_dir', 'spawn_agent'],
          instructions: 'Delegate the looking around.',
          model: { provider: 'openai-compatible', baseUrl: `${server.url}/v1`, model: 'parent-model' },
        },
      },
    });
    server.route = (req) => {
      const system = systemOf(req);
      if (system.includes('"explorer"')) return { sse: final('two files') };
      const results = (req.body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;
      return { sse: results === 0 ? spawn : final('the explorer found two files') };
    };
    rt = await fx.start(modelFromConfig(fx.loaded, { retryBaseMs: 10 }));
    const { outcome } = await rt.chat('lead', 'what is here?');
    expect(outcome).toMatchObject({ status: 'completed', text: 'the explorer found two files' });

    const child = server.requests.find((r) => systemOf(r).includes('"explorer"'));
    expect(child).toBeDefined();
    const body = (child as SeenRequest).body;
    expect(body.model).toBe('parent-model');
    const system = (body.messages as { content: string }[])[0]?.content ?? '';
    expect(system).toContain('Mode: ');
    // The parent's instructions are its own: the Explorer gets the preamble only.
    expect(system).not.toContain('Delegate the looking around.');
    const tools = ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    expect(tools).not.toContain('spawn_agent');
    expect(tools).toContain('list_dir');
    expect((body.messages as { role: string; content: string }[])[1]).toEqual({
      role: 'user',
      content: 'list the files',
    });
  });
});
