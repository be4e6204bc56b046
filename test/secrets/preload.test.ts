import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import {
  EnvSecretStore,
  registerKnownSecrets,
  secretNamesIn,
  type SecretStore,
} from '../../runtime/secrets/index.ts';
import { Redactor } from '../../store/redaction/redactor.ts';
import { eventually, runtimeFixture } from '../support/runtime.ts';
import { databaseFiles, storedBytes } from '../support/stored-bytes.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

/** A store that can only be asked by name (like the OS keyring): no values held to hand over. */
function byNameOnly(values: Record<string, string>): SecretStore & { asked: string[] } {
  const asked: string[] = [];
  return {
    kind: 'test',
    asked,
    async get(name) {
      asked.push(name);
      if (name === 'broken') throw new Error('backend failed');
      return values[name] ?? null;
    },
    async set() {},
    async delete() {
      return false;
    },
  };
}

describe('secrets known at boot are registered before anything can persist one', () => {
  it('finds every { "secret": name } reference of a config, at any depth, and nothing that only looks like one', () => {
    const names = secretNamesIn({
      agents: { a: { model: { provider: 'openai-compatible', apiKey: { secret: 'openai' } } } },
      mcp: { servers: { notes: { env: { TOKEN: { secret: 'notes-token' }, PLAIN: 'x' } } } },
      surfaces: { platforms: [{ id: 'tg', token: { secret: 'tg-bot' } }] },
      // Not a reference: a second key, or a non-string.
      other: { secret: 'no', note: 'two keys' },
      odd: { secret: 42 },
    });
    expect([...names].sort()).toEqual(['notes-token', 'openai', 'tg-bot']);
  });

  it('a store asked by name registers each configured value; a missing or failing one is left to its user', async () => {
    const store = byNameOnly({ openai: 'sk-live-0123456789abcdef', 'tg-bot': '123456:ABCdefGHIjklMNOpqr' });
    const redactor = new Redactor();
    const config = {
      a: { apiKey: { secret: 'openai' } },
      b: [{ token: { secret: 'tg-bot' } }, { token: { secret: 'missing' } }, { token: { secret: 'broken' } }],
    };
    expect(await registerKnownSecrets(config, store, redactor)).toBe(2);
    expect(store.asked.sort()).toEqual(['broken', 'missing', 'openai', 'tg-bot']);
    const out = redactor.redactString('key sk-live-0123456789abcdef and bot 123456:ABCdefGHIjklMNOpqr');
    expect(out).not.toContain('sk-live-0123456789abcdef');
    expect(out).not.toContain('ABCdefGHIjklMNOpqr');
  });

  it('the env backend hands over every value it took, referenced or not', async () => {
    const env = { SNOTRA_SECRET_DEPLOY_KEY: 'dk-9f8e7d6c5b4a3210', OTHER: 'kept' };
    const store = new EnvSecretStore(env);
    const redactor = new Redactor();
    expect(await registerKnownSecrets({}, store, redactor)).toBe(1);
    expect(redactor.redactString('use dk-9f8e7d6c5b4a3210 now')).toBe('use [REDACTED] now');
  });

  it('a secret the model puts into a tool argument before any tool used it is in no row, log or event of the run, and the call restored without it is not run', async () => {
    const secret = 'zq-unused-secret-5e1f0c9a7b3d';
    const fx = runtimeFixture({ agents: { worker: { mode: 'ask', tools: ['send_message'] } } });
    const rt = await fx.start(
      new ScriptedModel({
        worker: [
          {
            respond: {
              kind: 'calls',
              calls: [
                { id: 'c1', tool: 'send_message', args: { channel: '#ops', text: `deploy with ${secret}` } },
              ],
            },
          },
          {
            // The call ran as the model wrote it (this process kept its exact arguments).
            expect: { kind: 'tool.result', tool: 'send_message' },
            respond: { kind: 'final', text: `done, key was ${secret}` },
          },
        ],
      }),
      { secretStore: new EnvSecretStore({ SNOTRA_SECRET_DEPLOY_KEY: secret }) },
    );
    const events: string[] = [];
    const parked: string[] = [];
    try {
      rt.runs.onRunEvent((e) => {
        events.push(JSON.stringify(e));
        if (e.type === 'run.parked') parked.push(e.runId);
      });
      const runId = await rt.runs.runTask('worker', 'task', 'deploy');
      // Decided once the run is parked: it resumes from its recorded (redacted) snapshot. (A
      // decision that reaches the run before it parks runs on its live context instead.)
      await eventually(() => parked.includes(runId), 20_000, 'the run parked');
      const pending = await eventually(
        () => runtimeInternals(rt).store.approvals.listPending({})[0],
        20_000,
        'the parked approval',
      );
      expect(JSON.stringify(pending)).not.toContain(secret);
      expect(JSON.stringify(pending)).toContain('[REDACTED]');
      rt.decide(pending.id, 'approved', 'tester');
      expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', reason: 'final_answer' });
      // The parked run came back from its recorded snapshot, whose arguments are redacted; this
      // process kept the call's exact arguments, so it ran as the model wrote it and the human
      // approved it, never with `deploy with [REDACTED]` (after a restart it would not run at
      // all: test/runtime/args-at-rest.test.ts). The tool's own output is not the store's.
      expect(fx.sent()).toEqual([`#ops deploy with ${secret}`]);
      expect(runtimeInternals(rt).store.ledger.lookup(`call:${runId}:c1`)?.status).toBe('completed');
      const kinds = runtimeInternals(rt)
        .store.audit.list({ runId })
        .filter((e) => e.callId === 'c1')
        .map((e) => e.kind);
      expect(kinds).toEqual([
        'proposed',
        'policy_decided',
        'approval_requested',
        'approval_resolved',
        'started',
        'completed',
      ]);
      expect(JSON.stringify(runtimeInternals(rt).store.audit.list({ runId }))).not.toContain(secret);
    } finally {
      await rt.stop();
    }
    // Raw bytes and the text of every compressed row (snapshots and audit rows are stored
    // compressed: a scan of the raw bytes alone would pass whatever they held).
    const files = databaseFiles(fx.stateDir);
    for (const f of files) expect(storedBytes(f).includes(Buffer.from(secret)), f).toBe(false);
    // The scan does decode them: the final answer is only in the compressed snapshot.
    const all = storedBytes(...files);
    expect(all.includes(Buffer.from('done, key was [REDACTED]'))).toBe(true);
    expect(Buffer.concat(files.map((f) => readFileSync(f))).includes(Buffer.from('done, key was'))).toBe(
      false,
    );
    expect(fx.logs.join('')).not.toContain(secret);
    expect(events.join('')).not.toContain(secret);
    fx.cleanup();
  }, 60_000);
});
