import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import { CompactionError, SessionNotFoundError, showSession } from '../../runtime/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import { COMPACT_INSTRUCTION, COMPACT_SYSTEM } from '../../runtime/sessions/compact-plan.ts';
import { SUMMARY_HEADING } from '../../runtime/sessions/history.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { FakeModelServer, fixture, type FakeReply, type SeenRequest } from '../model/fake-server.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

const KEY = 'sk-proj-Cm7Pq2Rt9Vx4Lw8Yn3Hs6Jb1Fc5Gz0Ka';

interface Message {
  readonly role: string;
  readonly content: string | null;
  readonly tool_calls?: { id: string; function: { name: string } }[];
}
const messages = (r: SeenRequest) => (r.body.messages ?? []) as Message[];
const lastUser = (r: SeenRequest) =>
  messages(r)
    .filter((m) => m.role === 'user')
    .at(-1)?.content ?? '';
/** The conversation of a request as role:text lines (the system prompt left out). */
const lines = (r: SeenRequest) =>
  messages(r)
    .filter((m) => m.role !== 'system')
    .flatMap((m) => [
      ...(m.content === null || m.content === '' ? [] : [`${m.role}:${m.content}`]),
      ...(m.tool_calls ?? []).map((c) => `call:${c.function.name}`),
    ]);

let server: FakeModelServer;
let fx: RuntimeFixture;
let rt: Runtime;
/** What the server answers a summary request with (the last user message is the instruction). */
let summary: () => FakeReply = () => ({ status: 599 });

const M1 = `first: ${'alpha '.repeat(200)}what does notes.txt say?`;
const M2 = `second: ${'beta '.repeat(240)}`;
const M3 = `third, word for word: ${'gamma '.repeat(200)}`;
/** The text of a final answer of the `final.sse` fixture. */
const final = (text: string): FakeReply => ({ sse: fixture('openai/final.sse', { TEXT: text }) });
const SAID = (text: string) => `The file says: ${text}`;
const SUMMARY = SAID('SUMMARY-1: the user asked what notes.txt says; it says tangerine.');

beforeAll(async () => {
  server = await FakeModelServer.start();
  server.route = (req) => {
    const user = lastUser(req);
    if (user === COMPACT_INSTRUCTION) return summary();
    const answered = messages(req).some((m) => m.role === 'tool');
    if (user === M1 && !answered) return { sse: fixture('openai/read-file.sse') };
    return { sse: fixture('openai/final.sse', { TEXT: `answer ${server.requests.length}` }) };
  };
  const model = {
    provider: 'openai-compatible',
    baseUrl: `${server.url}/v1`,
    model: 'test-model',
    apiKey: { secret: 'model-key' },
    contextTokens: 1000,
  } as const;
  fx = runtimeFixture({
    agents: {
      assistant: { mode: 'allow', tools: ['read_file'], model },
      // Each answer of `final.sse` reports 212 + 19 tokens: a session may use 400.
      capped: { mode: 'allow', tools: ['read_file'], model, sessionBudget: { tokens: 400 } },
    },
  });
  // A 24 kB file: its result alone is ~6000 estimated tokens.
  writeFileSync(join(fx.project, 'notes.txt'), `${'lorem ipsum dolor sit amet '.repeat(900)}tangerine\n`);
  rt = await fx.start(modelFromConfig(fx.loaded, { retryBaseMs: 10 }), {
    secretStore: new MemorySecretStore({ 'model-key': KEY }),
  });
});
afterAll(async () => {
  await rt?.stop();
  await server?.close();
  fx?.cleanup();
});

async function say(text: string, sessionId: string): Promise<void> {
  const runId = await rt.runs.submit('assistant', text, { sessionId });
  expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
}

describe('compaction of a durable conversation (streaming OpenAI-compatible server)', () => {
  it('near the context window the old tool result is elided first, then older exchanges are summarized by the model; the last user message goes out intact', async () => {
    summary = () => final('SUMMARY-1: the user asked what notes.txt says; it says tangerine.');
    await say(M1, 'long');
    await say(M2, 'long');
    // The second message fits once the old result is elided: nothing is summarized yet.
    expect(server.requests).toHaveLength(3);
    const second = server.requests[2] as SeenRequest;
    expect(second.raw).toMatch(/\[elided: read_file notes\.txt, 2\d kB\]/);
    expect(second.raw).not.toContain('lorem ipsum');
    expect(lastUser(second)).toBe(M2);

    await say(M3, 'long');
    expect(server.requests).toHaveLength(5);
    // The summary request: the older exchange (its result elided), the instruction, no tools.
    const ask = server.requests[3] as SeenRequest;
    expect(messages(ask)[0]).toEqual({ role: 'system', content: COMPACT_SYSTEM });
    expect(ask.raw).toContain('alpha alpha');
    expect(ask.raw).not.toContain('beta beta');
    expect(ask.body.tools).toBeUndefined();
    // The third message's request: the summary in place of the first exchange, then the second
    // exchange as it was, then the third message, whole.
    const third = lines(server.requests[4] as SeenRequest);
    expect(third[0]).toBe(`user:${SUMMARY_HEADING}\n${SUMMARY}`);
    expect(third[1]).toBe(`user:${M2}`);
    expect(third.at(-1)).toBe(`user:${M3}`);
    expect((server.requests[4] as SeenRequest).raw).not.toContain('alpha alpha');

    // The first exchange stays in the store, marked compacted, its result whole.
    const stored = rt.sessions.messages('long');
    expect(stored.map((m) => m.compacted)).toEqual([true, true, true, true, false, false, false, false]);
    expect(JSON.stringify(stored[2]?.entry)).toContain('lorem ipsum');
    const audited = runtimeInternals(rt)
      .store.audit.list()
      .filter((e) => e.kind === 'session_compacted');
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ sessionId: 'long', agentId: 'assistant', status: 'compacted' });
    expect(audited[0]?.detail).toMatchObject({ throughSeq: 4, summarized: 4 });
    // `snotra sessions show` reads the same from the state dir (read-only, beside the runtime).
    const shown = showSession(fx.stateDir, 'long');
    expect(shown?.compaction).toMatchObject({ throughSeq: 4, summarized: 4, summary: SUMMARY });
    expect(shown?.messages.map((m) => m.compacted)).toEqual(stored.map((m) => m.compacted));
  });

  it('on demand (/compact) the whole conversation is summarized after the previous summary; again, nothing new is compacted; unknown and failing cases are clear errors that change nothing', async () => {
    const before = server.requests.length;
    summary = () => final('SUMMARY-2: all of it.');
    const done = await rt.sessions.compact('long', { surface: 'test' });
    expect(done).toMatchObject({
      sessionId: 'long',
      compacted: true,
      throughSeq: 8,
      summarized: 4,
      summary: SAID('SUMMARY-2: all of it.'),
    });
    // The summary request starts from the previous summary.
    expect(lines(server.requests[before] as SeenRequest)[0]).toBe(`user:${SUMMARY_HEADING}\n${SUMMARY}`);
    expect(rt.sessions.messages('long').every((m) => m.compacted)).toBe(true);

    expect(await rt.sessions.compact('long')).toMatchObject({ compacted: false, summarized: 0 });
    expect(server.requests).toHaveLength(before + 1);

    await expect(rt.sessions.compact('no-such-session')).rejects.toBeInstanceOf(SessionNotFoundError);

    // A model that answers with an error: a CompactionError naming the session; nothing stored.
    await say('one more', 'other');
    summary = () => ({ status: 400, json: { error: { message: 'context too long' } } });
    const failed = await rt.sessions.compact('other').catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(CompactionError);
    expect((failed as CompactionError).code).toBe('compaction_failed');
    expect((failed as Error).message).toContain('session "other"');
    expect(rt.sessions.messages('other').some((m) => m.compacted)).toBe(false);

    // The next message of the compacted session is sent after the latest summary alone.
    await say('and now?', 'long');
    expect(lines(server.requests.at(-1) as SeenRequest)).toEqual([
      `user:${SUMMARY_HEADING}\n${SAID('SUMMARY-2: all of it.')}`,
      'user:and now?',
    ]);
  });

  it("the summarizing model call's tokens count in its session (outside any run): `sessions show --json` and the session budget see them", async () => {
    summary = () => final('SUMMARY-3: a greeting.');
    const runId = await rt.runs.submit('capped', 'hello', {
      sessionId: 'budgeted',
      interaction: 'unattended',
    });
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    const show = async () => {
      const out = await runCliInProcess(
        ['sessions', 'show', 'budgeted', '--state-dir', fx.stateDir, '--json'],
        fx.project,
      );
      expect(out.code).toBe(0);
      return (JSON.parse(out.out) as { usage: unknown }).usage;
    };
    expect(await show()).toEqual({ inputTokens: 212, outputTokens: 19 });
    const done = await rt.sessions.compact('budgeted', { surface: 'test' });
    expect(done).toMatchObject({ compacted: true, usage: { inputTokens: 212, outputTokens: 19 } });
    // The run's own usage is unchanged; the session's holds the compaction's too.
    expect(runtimeInternals(rt).runs.contextOf(runId)?.tokens).toEqual({
      inputTokens: 212,
      outputTokens: 19,
    });
    expect(await show()).toEqual({ inputTokens: 424, outputTokens: 38 });

    // 462 of the session's 400 tokens are spent: the next run parks before its first model call.
    const requests = server.requests.length;
    const next = await rt.runs.submit('capped', 'and now?', {
      sessionId: 'budgeted',
      interaction: 'unattended',
    });
    const item = await eventually(
      () =>
        runtimeInternals(rt)
          .store.approvals.listPending()
          .find((a) => a.runId === next),
      30_000,
      'the budget request of the run after the compaction',
    );
    expect(item).toMatchObject({
      kind: 'budget',
      reason: 'budget_tokens',
      args: { dimension: 'tokens', used: 0, limit: 0, grant: 400 },
    });
    expect(server.requests).toHaveLength(requests);
    expect(rt.decide(item.id, 'approved', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(next)).toMatchObject({ status: 'completed' });
  });

  it('a summary request answered with no text fails the compaction but its tokens still count in the session: the call was paid for', async () => {
    const show = async () => {
      const out = await runCliInProcess(
        ['sessions', 'show', 'blank', '--state-dir', fx.stateDir, '--json'],
        fx.project,
      );
      expect(out.code).toBe(0);
      return JSON.parse(out.out) as { usage: unknown; compaction: unknown };
    };
    await say('hello', 'blank');
    expect((await show()).usage).toEqual({ inputTokens: 212, outputTokens: 19 });
    // Only blanks in every content delta (the same 212 + 19 tokens reported): no summary.
    summary = () => ({
      sse: fixture('openai/final.sse', { TEXT: '' }).map((c) =>
        c.replace(/"content":"[^"]*"/g, '"content":" \\n"'),
      ),
    });
    const failed = await rt.sessions.compact('blank', { surface: 'test' }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(CompactionError);
    expect((failed as Error).message).toMatch(/session "blank".*no text/);
    const after = await show();
    expect(after.compaction).toBeNull();
    expect(after.usage).toEqual({ inputTokens: 424, outputTokens: 38 });
    // The look-alike that spends nothing: a summary request refused with an error adds no tokens.
    summary = () => ({ status: 400, json: { error: { message: 'context too long' } } });
    await expect(rt.sessions.compact('blank')).rejects.toBeInstanceOf(CompactionError);
    expect((await show()).usage).toEqual({ inputTokens: 424, outputTokens: 38 });
    // A summary that is kept afterwards adds its own.
    summary = () => final('SUMMARY-4: a greeting.');
    expect(await rt.sessions.compact('blank')).toMatchObject({ compacted: true });
    expect((await show()).usage).toEqual({ inputTokens: 636, outputTokens: 57 });
  });
});
