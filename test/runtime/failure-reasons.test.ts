import { afterEach, describe, expect, it } from 'vitest';
import type { ModelProvider } from '../../actors/model/provider.ts';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runCliInProcess, type CliResult } from '../support/cli-in-process.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

const SECRET = 'prov-key-Qm4Zt8Lx2Wv6Rp0Yn';

function cli(argv: string[]): Promise<CliResult> {
  return runCliInProcess(argv, fx.dir);
}

/**
 * Runs one chat that must fail; checks the reason code and message in the outcome, the stored
 * snapshot (`runs show`, --json and plain), the audit (`run_failed`) and the log.
 */
async function expectFailure(
  model: ModelProvider,
  agent: string,
  message: RegExp,
  started: (rt: Runtime) => void = () => {},
): Promise<string> {
  rt = await fx.start(model);
  started(rt);
  const { runId, outcome } = await rt.chat(agent, 'do something');
  expect(outcome).toMatchObject({ status: 'failed', reason: 'model_error' });
  expect(outcome.message).toMatch(message);
  const audit = runtimeInternals(rt)
    .store.audit.list({ runId })
    .filter((e) => e.kind === 'run_failed');
  expect(audit).toHaveLength(1);
  expect(audit[0]).toMatchObject({ status: 'failed', runId, agentId: agent, callId: null });
  expect((audit[0]?.detail as { reason: string; message: string }).reason).toBe('model_error');
  expect((audit[0]?.detail as { message: string }).message).toMatch(message);
  const logged = fx.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === 'run failed');
  expect(logged).toMatchObject({ runId, reason: 'model_error' });
  expect(String(logged?.message)).toMatch(message);
  await rt.stop();
  rt = null;

  const json = await cli(['runs', 'show', runId, '--json', '--state-dir', fx.stateDir]);
  expect(json.code).toBe(0);
  const shown = JSON.parse(json.out) as { outcome: { reason: string; message: string } };
  expect(shown.outcome.reason).toBe('model_error');
  expect(shown.outcome.message).toMatch(message);
  const plain = await cli(['runs', 'show', runId, '--state-dir', fx.stateDir]);
  expect(plain.code).toBe(0);
  expect(plain.out).toContain('"reason": "model_error"');
  expect((JSON.parse(plain.out) as { outcome: { message: string } }).outcome.message).toMatch(message);
  return runId;
}

describe('a failed run keeps its reason code and a readable message', () => {
  it('a scripted model that runs out of steps', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'allow' } } });
    const model = new ScriptedModel({
      worker: [{ respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'list_dir', args: { path: '.' } }] } }],
    });
    await expectFailure(
      model,
      'worker',
      /^the model failed at step 1: unexpected_step: scripted model, agent worker, run .*: the script has only 1 steps$/,
    );
  });

  it('an agent with no model', async () => {
    fx = runtimeFixture({ agents: { bare: { mode: 'ask' } } });
    await expectFailure(
      modelFromConfig(fx.loaded),
      'bare',
      /^the model failed at step 0: agent "bare" has no model configured \(set agents\.bare\.model\)$/,
    );
  });

  it('a model provider error, with the provider key redacted everywhere', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    const failing: ModelProvider = {
      step: async () => {
        throw Object.assign(new Error(`HTTP 401 from https://models.example/v1 (key ${SECRET} rejected)`), {
          code: 'provider_http_error',
        });
      },
    };
    const runId = await expectFailure(
      failing,
      'worker',
      /^the model failed at step 0: provider_http_error: HTTP 401 from https:\/\/models\.example\/v1 \(key \[REDACTED\] rejected\)$/,
      // As a provider resolving its key would: the resolved value is registered with the redactor.
      (r) => runtimeInternals(r).store.redactor.registerSecret(SECRET),
    );
    expect(fx.logs.join('')).not.toContain(SECRET);
    const json = await cli(['runs', 'show', runId, '--json', '--state-dir', fx.stateDir]);
    expect(json.out).not.toContain(SECRET);
    const audit = await cli(['audit', '--json', '--state-dir', fx.stateDir]);
    expect(audit.out).toContain('run_failed');
    expect(audit.out).not.toContain(SECRET);
  });
});
