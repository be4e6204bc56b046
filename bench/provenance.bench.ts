// Issue 37: the cost of an approval's binding check per call (hash the arguments about to run and
// compare them with the approval's, read from a real SQLite store), and `policy replay` over an
// audit of 10,000 recorded calls (a real store file; real policy evaluation of every call).
// Run: npx tsx bench/provenance.bench.ts — prints JSON (µs per check: median, p99; replay ms).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkBinding } from '../actors/run/approval-binding.ts';
import type { Decision } from '../policy/decision.ts';
import { argsHash } from '../policy/provenance/args-hash.ts';
import { ToolRegistry } from '../policy/registry.ts';
import { createPolicyChecker, parseConfig, recordedCalls, replayCalls } from '../runtime/index.ts';
import { Redactor, openStore } from '../store/index.ts';
import { summarize } from './stats.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'snotra-provenance-bench-'));
mkdirSync(join(dir, 'project'));
const store = openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
const registry = ToolRegistry.withBuiltins();
const decision: Decision = {
  decision: 'approval-required',
  reason: 'mode_ask',
  risk: 'write-local',
  rule: { id: 'mode.ask', source: 'mode' },
  targets: [],
  humanRequired: true,
  step: 5,
};
const args = { path: 'src/app.ts', content: 'export const x = 1;\n'.repeat(20) };
store.approvals.create({
  id: 'a1',
  callId: 'run-1:c1',
  runId: 'run-1',
  sessionId: 's',
  agentId: 'assistant',
  tool: 'write_file',
  args,
  risk: 'write-local',
  reason: 'mode_ask',
  ruleId: 'mode.ask',
  idempotencyKey: 'k',
  argsHash: argsHash(args),
  expiresAt: Date.now() + 3_600_000,
});
store.approvals.decide('a1', 'approved', 'local:bench');
const input = { runId: 'run-1', call: { id: 'c1', tool: 'write_file', args }, decision, idempotencyKey: 'k' };
const samples: number[] = [];
for (let i = 0; i < 5000; i++) {
  const t = process.hrtime.bigint();
  if (!checkBinding(input, { store, registry }).ok) throw new Error('binding check failed');
  samples.push(Number(process.hrtime.bigint() - t) / 1000);
}
const hashOnly: number[] = [];
for (let i = 0; i < 5000; i++) {
  const t = process.hrtime.bigint();
  argsHash(args);
  hashOnly.push(Number(process.hrtime.bigint() - t) / 1000);
}

// An audit of CALLS recorded calls: a mix of reads, writes, shell commands and sends.
const tools = [
  { tool: 'read_file', args: (i: number) => ({ path: `src/f${i}.ts` }), status: 'allow' },
  {
    tool: 'write_file',
    args: (i: number) => ({ path: `src/f${i}.ts`, content: 'x' }),
    status: 'approval-required',
  },
  {
    tool: 'shell',
    args: (i: number) => ({ command: `git status && ls src/d${i % 50}` }),
    status: 'approval-required',
  },
  {
    tool: 'send_message',
    args: (i: number) => ({ channel: `#c${i % 7}`, text: 'hi' }),
    status: 'approval-required',
  },
];
store.transaction(() => {
  for (let i = 0; i < CALLS; i++) {
    const t = tools[i % tools.length] as (typeof tools)[number];
    const base = {
      runId: `run-${Math.floor(i / 10)}`,
      callId: `c${i % 10}`,
      agentId: 'assistant',
      tool: t.tool,
    };
    store.audit.append({ ...base, kind: 'proposed', detail: { args: t.args(i) } });
    store.audit.append({ ...base, kind: 'policy_decided', status: t.status, ruleId: 'mode.ask' });
  }
});
const loaded = parseConfig(
  JSON.stringify({
    stateDir: 'state',
    workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
    agents: { assistant: { mode: 'allow', rules: [{ id: 'no-push', command: 'git push', effect: 'deny' }] } },
  }),
  join(dir, 'proposed.json'),
  dir,
);
const t0 = performance.now();
const checker = await createPolicyChecker(loaded, {
  detectSandbox: () => ({ name: 'none', reason: 'bench' }),
});
const t1 = performance.now();
const calls = recordedCalls(store.audit.iterate({}));
const report = replayCalls(calls, loaded.config, checker.check);
const t2 = performance.now();
store.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify(
    {
      bindingCheckUs: summarize(samples),
      argsHashUs: summarize(hashOnly),
      replay: {
        calls: calls.length,
        changed: Object.values(report.groups).reduce((n, g) => n + g.length, 0),
        setupMs: Math.round(t1 - t0),
        replayMs: Math.round(t2 - t1),
      },
    },
    null,
    2,
  ),
);
