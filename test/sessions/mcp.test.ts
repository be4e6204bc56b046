import { afterEach, describe, expect, it } from 'vitest';
import type { ModelProvider, ModelStepRequest } from '../../actors/model/provider.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { RunTaskInput } from '../../surfaces/mcp/schemas.ts';
import { McpSurface, McpSurfaceError } from '../../surfaces/mcp/service.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  fx?.cleanup();
  rt = null;
  fx = null;
});

/** Answers at once, except a message `send` proposes a send_message call (which parks: ask mode). */
class Model implements ModelProvider {
  readonly seen: ModelStepRequest[] = [];
  async step(request: ModelStepRequest) {
    this.seen.push(request);
    const last = request.transcript.at(-1);
    if (last?.role === 'user' && last.text === 'send')
      return {
        kind: 'calls' as const,
        calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#a', text: 'x' } }],
      };
    return { kind: 'final' as const, text: `answer ${this.seen.length}` };
  }
}

describe('MCP run_task with a session', () => {
  it('continues the named conversation; without a session a run stands alone; a held session is session_busy', async () => {
    fx = runtimeFixture({ agents: { assistant: { mode: 'ask' } } });
    const model = new Model();
    rt = await fx.start(model);
    const mcp = new McpSurface(rt, 20_000);

    expect(await mcp.runTask('assistant', 'one', undefined, 'plans')).toMatchObject({ status: 'completed' });
    expect(await mcp.runTask('assistant', 'two', undefined, 'plans')).toMatchObject({ status: 'completed' });
    expect(model.seen[1]?.transcript.map((e) => (e.role === 'observation' ? '' : e.text))).toEqual([
      'one',
      'answer 1',
      'two',
    ]);
    expect(await mcp.runTask('assistant', 'three')).toMatchObject({ status: 'completed' });
    expect(model.seen[2]?.transcript).toEqual([{ role: 'user', text: 'three' }]);
    expect(await mcp.runTask('assistant', 'four')).toMatchObject({ status: 'completed' });
    expect(model.seen[3]?.transcript).toEqual([{ role: 'user', text: 'four' }]);

    const parked = await mcp.runTask('assistant', 'send', 5_000, 'held');
    const runtime = rt;
    await eventually(
      () => runtime.read.pendingApprovals().find((a) => a.runId === parked.runId),
      10_000,
      'park',
    );
    const busy = await mcp
      .runTask('assistant', 'again', undefined, 'held')
      .then(() => null)
      .catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(McpSurfaceError);
    expect(busy).toMatchObject({ code: 'session_busy' });
    expect((busy as Error).message).toMatch(/^session: session "held" is busy: run /);
  });

  it('the session input is checked before anything runs', () => {
    expect(RunTaskInput.safeParse({ agent: 'a', text: 't', session: 'ok-name' }).success).toBe(true);
    for (const session of ['', 'a\u0000b', 'line\nbreak', 'x'.repeat(201)])
      expect(
        RunTaskInput.safeParse({ agent: 'a', text: 't', session }).success,
        JSON.stringify(session),
      ).toBe(false);
  });
});
