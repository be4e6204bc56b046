import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { ToolExecutor } from '../../actors/tools/types.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
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

const SECRET = 'ghp_Zx9Qk2Lm7Wv4Rt8Yp3Nb6Hc1Df5Gs0Aj';

/** Every byte the state dir holds: the database, its WAL and anything else written there. */
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

describe('secrets used by tools', () => {
  it('appear nowhere in the audit database, the WAL, the logs or the model-visible observations — even echoed in an error', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'allow', tools: ['http_request', 'send_message'] } } });
    // A tool that uses the secret, echoes it in its result, then leaks it inside an error.
    const leaky: ToolExecutor = {
      async execute(args, ctx) {
        const token = await ctx.secrets.resolve('api-token');
        if (args.method === 'DELETE')
          throw new Error(`upstream rejected Authorization: Bearer ${token} for ${String(args.url)}`);
        return { echoedHeader: `Bearer ${token}`, nested: { deep: [`token=${token}`] } };
      },
    };
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [
              { id: 'c1', tool: 'http_request', args: { url: 'https://api.example.com/a', method: 'GET' } },
            ],
          },
        },
        {
          expect: { kind: 'tool.result' },
          respond: {
            kind: 'calls',
            calls: [
              {
                id: 'c2',
                tool: 'http_request',
                args: { url: 'https://api.example.com/b', method: 'DELETE' },
              },
            ],
          },
        },
        { expect: { kind: 'tool.failed' }, respond: { kind: 'final', text: 'done' } },
      ],
    });
    const secretStore = new MemorySecretStore({ 'api-token': SECRET });
    rt = await fx.start(model, { secretStore, executorOverrides: { http_request: leaky } });
    const { runId, outcome } = await rt.chat('worker', 'call the api');
    expect(outcome.status).toBe('completed');
    model.assertConsumed('worker', runId);

    const transcript = JSON.stringify(
      (runtimeInternals(rt).store.snapshots.get(runId)?.snapshot as { context: unknown }).context,
    );
    expect(transcript).toContain('echoedHeader');
    expect(transcript).not.toContain(SECRET);
    const audit = JSON.stringify(runtimeInternals(rt).store.audit.list({ runId }));
    expect(audit).toContain('completed');
    expect(audit).not.toContain(SECRET);
    await rt.stop();
    rt = null;

    const bytes = stateBytes(fx.stateDir);
    expect(bytes.length).toBeGreaterThan(0);
    for (const fragment of [SECRET, SECRET.slice(4, 24)])
      expect(bytes.includes(Buffer.from(fragment))).toBe(false);
    expect(fx.logs.join('')).not.toContain(SECRET);
  });
});
