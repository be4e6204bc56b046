/** Shared set-up of the MCP client tests: real servers, the real runtime, the scripted model. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import { parseConfig, type LoadedConfig } from '../../runtime/config/load.ts';
import { Runtime, type RuntimeOptions } from '../../runtime/runtime.ts';
import { MemorySecretStore } from '../../runtime/secrets/memory.ts';
import { eventually } from '../support/runtime.ts';
import type { Observation, RunOutcome, TranscriptEntry } from '../../machines/run/types.ts';
import type { ApprovalRecord } from '../../store/index.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

export const REPO = resolve(import.meta.dirname, '../..');
export const BIN = join(REPO, 'node_modules/.bin');
export const HOSTILE = join(REPO, 'test/fixtures/mcp-hostile.mjs');

/** A hostile server's config; its log and control file live in the project (writable in its sandbox). */
export function hostileServer(
  project: string,
  extra: Record<string, unknown> = {},
  mode = '',
): Record<string, unknown> {
  const dir = join(project, '.hostile');
  mkdirSync(dir, { recursive: true });
  return {
    command: process.execPath,
    args: [HOSTILE],
    env: {
      HOSTILE_TOKEN: { secret: 'hostile-token' },
      HOSTILE_LOG: join(dir, 'log'),
      HOSTILE_CONTROL: join(dir, 'control'),
      ...(mode ? { HOSTILE_MODE: mode } : {}),
    },
    network: false,
    ...extra,
  };
}

/** Lines of the hostile server's log. */
export function hostileLog(project: string): string[] {
  const file = join(project, '.hostile/log');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** Every file under `dir` (recursively), for "the secret is nowhere" checks. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

/** A temporary workspace with MCP servers, started as a real runtime with the scripted model. */
export interface McpFixture {
  readonly dir: string;
  readonly project: string;
  readonly stateDir: string;
  readonly loaded: LoadedConfig;
  readonly logs: string[];
  start(steps: Record<string, readonly ScriptedStep[]>, extra?: Partial<RuntimeOptions>): Promise<Runtime>;
  cleanup(): void;
}

/**
 * `config(project)` is merged over a workspace of one read-write root `project`; the secret store
 * holds `secret` as "hostile-token".
 */
export function mcpFixture(config: (project: string) => Record<string, unknown>, secret: string): McpFixture {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-mcp-')));
  const project = join(dir, 'project');
  mkdirSync(project);
  const text = JSON.stringify({
    stateDir: 'state',
    workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write', primary: true }] },
    ...config(project),
  });
  // Also on disk, for tests that start the runtime as a process.
  writeFileSync(join(dir, 'snotra.config.json'), text);
  const loaded = parseConfig(text, join(dir, 'snotra.config.json'), dir);
  const logs: string[] = [];
  return {
    dir,
    project,
    stateDir: join(dir, 'state'),
    loaded,
    logs,
    start: (steps, extra = {}) =>
      Runtime.start({
        loaded,
        model: new ScriptedModel(steps),
        secretStore: new MemorySecretStore({ 'hostile-token': secret }),
        logDestination: new Writable({
          write(chunk, _enc, cb) {
            logs.push(String(chunk));
            cb();
          },
        }),
        syncIntervalMs: 100,
        ...extra,
      }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Waits until server `id` of `rt` is ready. */
export function ready(rt: Runtime, id: string, timeoutMs = 60_000): Promise<unknown> {
  return eventually(
    () =>
      runtimeInternals(rt)
        .mcp?.status()
        .find((s) => s.id === id && s.state === 'ready'),
    timeoutMs,
    `${id} ready`,
  );
}

export { eventually };

/** One scripted run: each call in its own model step, then a final answer. */
export function script(calls: readonly { tool: string; args: unknown }[]): ScriptedStep[] {
  return [
    ...calls.map((c, i) => ({ respond: { kind: 'calls' as const, calls: [{ id: `c${i + 1}`, ...c }] } })),
    { respond: { kind: 'final' as const, text: 'done' } },
  ];
}

/** What the model saw in run `runId` (its transcript's observations, as persisted). */
export function observations(rt: Runtime, runId: string): Observation[] {
  const snap = runtimeInternals(rt).store.snapshots.get(runId)?.snapshot as
    { context?: { transcript?: TranscriptEntry[] } } | undefined;
  return (snap?.context?.transcript ?? []).flatMap((e) => (e.role === 'observation' ? [e.observation] : []));
}

/**
 * Runs `agent` once (attended); every approval request goes to `decide` (default: approve).
 * Resolves with the outcome and what the model saw.
 */
export async function runOnce(
  rt: Runtime,
  agent: string,
  decide: (approval: ApprovalRecord) => Promise<'approved' | 'denied'> = async () => 'approved',
): Promise<{ runId: string; outcome: RunOutcome; seen: Observation[]; approvals: ApprovalRecord[] }> {
  const approvals: ApprovalRecord[] = [];
  const off = rt.onApproval((a) => {
    approvals.push(a);
    void decide(a).then((d) => rt.decide(a.id, d, 'tester'));
  });
  try {
    const { runId, outcome } = await rt.chat(agent, 'go');
    return { runId, outcome, seen: observations(rt, runId), approvals };
  } finally {
    off();
  }
}
