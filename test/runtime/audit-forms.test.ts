import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { ToolExecutor } from '../../actors/tools/types.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runCli } from '../../surfaces/cli/main.ts';
import type { CliIo } from '../../surfaces/cli/io.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { withDecodedRows } from '../support/stored-bytes.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

/** What the model invents and sends under a sensitive key: no secret store ever saw it. */
const SENT = 'vault-tok-9Rq3Wm7Zx1Lp5Kd';

function stateBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) parts.push(readFileSync(p));
    }
  };
  if (existsSync(dir)) walk(dir);
  // Decoded too: snapshots and audit rows are stored encoded.
  return withDecodedRows(Buffer.concat(parts));
}

describe('audit of an approved call through the runtime', () => {
  it('carries one call id form in every event, and a value sent under a sensitive key never comes back in plain text', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'ask' } },
      tools: { vault_put: { risk: 'write-local', approvalDefault: 'ask', source: 'extension' } },
    });
    // The tool repeats the value it was given, in plain text, in its result.
    const vault: ToolExecutor = {
      async execute(args) {
        return { stored: `saved ${String(args.name)} with token ${String(args.api_token)}` };
      },
    };
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'vault_put', args: { name: 'deploy', api_token: SENT } }],
          },
        },
        {
          expect: { kind: 'tool.result', contains: 'saved deploy' },
          respond: { kind: 'final', text: 'done' },
        },
      ],
    });
    rt = await fx.start(model, { executorOverrides: { ...fx.executors, vault_put: vault } });
    rt.onApproval((a) => void setTimeout(() => rt?.decide(a.id, 'approved', 'alice'), 0));
    const { runId, outcome } = await rt.chat('worker', 'store the token');
    expect(outcome).toMatchObject({ status: 'completed' });
    model.assertConsumed('worker', runId);

    const events = runtimeInternals(rt)
      .store.audit.list({ runId })
      .filter((e) => e.callId !== null);
    expect(events.map((e) => e.kind)).toEqual([
      'proposed',
      'policy_decided',
      'approval_requested',
      'approval_resolved',
      'started',
      'completed',
    ]);
    expect(new Set(events.map((e) => e.callId))).toEqual(new Set(['c1']));
    const transcript = JSON.stringify(runtimeInternals(rt).store.snapshots.get(runId)?.snapshot);
    expect(transcript).toContain('saved deploy with token [REDACTED]');
    await rt.stop();
    rt = null;

    let out = '';
    const io: CliIo = { stdout: (t) => void (out += t), stderr: () => {}, stdinLines: async function* () {} };
    expect(await runCli(['runs', 'show', runId, '--json', '--state-dir', fx.stateDir], io, fx.dir)).toBe(0);
    expect(await runCli(['audit', '--json', '--state-dir', fx.stateDir], io, fx.dir)).toBe(0);
    expect(out).toContain('saved deploy');
    expect(out).not.toContain(SENT);
    const bytes = stateBytes(fx.stateDir);
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.includes(Buffer.from(SENT))).toBe(false);
    expect(fx.logs.join('')).not.toContain(SENT);
  });
});
