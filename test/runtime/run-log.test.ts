import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { logLevelOf } from '../../surfaces/cli/start.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  fx?.cleanup();
  rt = null;
  fx = null;
});

const lines = (f: RuntimeFixture) =>
  f.logs
    .flatMap((chunk) => chunk.split('\n').filter(Boolean))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the daemon logs the lifecycle of runs and approvals, with ids and never payloads', () => {
  it('run started, approval requested, run parked, approval decided, run resumed, run completed; the sandbox mode; the runtime pid is kept', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'send_message', args: { channel: 'ops', text: 'payload-text-7731' } }],
          },
        },
        { expect: { kind: 'tool.result' }, respond: { kind: 'final', text: 'final-text-7731' } },
      ],
    });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('worker', 'nightly', 'message-text-7731');
    const msgs = () =>
      lines(fx as RuntimeFixture)
        .filter((l) => l.runId === runId)
        .map((l) => l.msg);
    await eventually(() => msgs().includes('run parked'), 10_000, 'the park line');
    const requested = lines(fx).find((l) => l.msg === 'approval requested');
    expect(requested).toMatchObject({
      runId,
      agentId: 'worker',
      tool: 'send_message',
      risk: 'external',
      callId: 'c1',
    });
    const approvalId = requested?.approvalId as string;
    expect(rt.decide(approvalId, 'approved', 'tester').ok).toBe(true);
    await rt.waitForRun(runId);
    await eventually(() => msgs().includes('run completed'), 10_000, 'the completion line');
    // The parked run's actor was stopped: the decision brings it back from its snapshot. A
    // decision is delivered before it is reported on stable storage (decide), or after (a CLI's
    // decision read from the store), so "run resumed" may come before or after "approval decided".
    expect(msgs().filter((m) => m !== 'run resumed')).toEqual([
      'run started',
      'approval requested',
      'run parked',
      'approval decided',
      'run completed',
    ]);
    const resumedAt = msgs().indexOf('run resumed');
    expect(msgs().filter((m) => m === 'run resumed')).toHaveLength(1);
    expect(resumedAt).toBeGreaterThan(msgs().indexOf('run parked'));
    expect(resumedAt).toBeLessThan(msgs().indexOf('run completed'));
    expect(lines(fx).find((l) => l.msg === 'run resumed')).toMatchObject({ runId, agentId: 'worker' });
    // The sandbox mode, once at boot.
    const sandbox = lines(fx).filter((l) => typeof l.msg === 'string' && l.msg.startsWith('sandbox: '));
    expect(sandbox).toHaveLength(1);
    expect(sandbox[0]?.sandbox).toBe(runtimeInternals(rt).policyEnv.sandbox.name);
    for (const l of lines(fx)) expect(l.pid).toBe(process.pid);
    expect(fx.logs.join('')).not.toMatch(/payload-text-7731|final-text-7731|message-text-7731/);
  });

  it('schedule fired and skipped, with the task and run ids, never the message', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'ask' } },
      surfaces: {
        scheduled: [
          { id: 'every-second', agent: 'worker', cron: '* * * * * *', message: 'message-text-9911' },
        ],
      },
    });
    // The first firing's run parks on its approval; the firings after it find it still going.
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'send_message', args: { channel: 'ops', text: 'payload-text-9911' } }],
          },
        },
      ],
    });
    rt = await fx.start(model);
    const f = fx;
    const skipped = () =>
      lines(f).find((l) => l.msg === 'schedule: firing skipped' && l.reason === 'previous_run_active');
    await eventually(() => skipped() !== undefined, 20_000, 'a skipped firing');
    const fired = lines(f).filter((l) => l.msg === 'schedule: fired');
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({
      task: 'every-second',
      agentId: 'worker',
      runId: expect.stringMatching(/^worker:/),
    });
    expect(skipped()).toMatchObject({ task: 'every-second', agentId: 'worker', fireAt: expect.any(Number) });
    await eventually(
      () => lines(f).some((l) => l.msg === 'run parked' && l.runId === fired[0]?.runId),
      10_000,
      'the fired run parked',
    );
    expect(f.logs.join('')).not.toMatch(/message-text-9911|payload-text-9911/);
  });

  it('the level comes from --log-level, else SNOTRA_LOG_LEVEL, else info; a bad one names where it came from', () => {
    expect(logLevelOf(undefined, undefined)).toBe('info');
    expect(logLevelOf(undefined, 'debug')).toBe('debug');
    expect(logLevelOf('warn', 'debug')).toBe('warn');
    expect(() => logLevelOf('loud', undefined)).toThrow(/--log-level: expected one of .* got "loud"/);
    expect(() => logLevelOf(undefined, 'loud')).toThrow(/SNOTRA_LOG_LEVEL: expected one of/);
  });
});
