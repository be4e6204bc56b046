import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Decision } from '../../policy/decision.ts';
import { Redactor, openStore } from '../../store/index.ts';
import { afterEachTest } from '../support/cleanup.ts';
import type { BeginCallInput, CreateApprovalInput, OpenStoreOptions, Store } from '../../store/index.ts';

/** A clock tests move by hand. */
export class ManualClock {
  constructor(public now = 1_700_000_000_000) {}
  readonly read = (): number => this.now;
  advance(ms: number): number {
    this.now += ms;
    return this.now;
  }
}

const dirs: string[] = [];
const stores: Store[] = [];

afterEachTest(() => {
  for (const store of stores.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary folder, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'snotra-store-test-'));
  dirs.push(dir);
  return dir;
}

/** Opens a store (closed after the test). */
export function track(store: Store): Store {
  stores.push(store);
  return store;
}

/** A store on a fresh file with a manual clock and its own redactor. */
export function openTemp(options: Partial<OpenStoreOptions> = {}): {
  store: Store;
  path: string;
  dir: string;
  redactor: Redactor;
  clock: ManualClock;
} {
  const dir = tempDir();
  const path = options.path ?? join(dir, 'snotra.db');
  const clock = new ManualClock();
  const redactor = options.redactor ?? new Redactor();
  const store = track(openStore({ clock: clock.read, ...options, path, redactor }));
  return { store, path, dir, redactor, clock };
}

/** An allow Decision on one path target. */
export const allowDecision: Decision = {
  decision: 'allow',
  reason: 'mode_allow',
  risk: 'write-local',
  rule: { id: 'mode.allow', source: 'mode' },
  targets: [
    {
      argument: 'path',
      input: 'src/a.ts',
      resolved: '/work/p/src/a.ts',
      root: 'project',
      access: 'read-write',
    },
  ],
  humanRequired: false,
  step: 9,
};

/** A beginCall input for call number `n`. */
export function callInput(n: number, overrides: Partial<BeginCallInput> = {}): BeginCallInput {
  return {
    idempotencyKey: `idem-${n}`,
    callId: `call-${n}`,
    runId: 'run-1',
    sessionId: 'session-1',
    agentId: 'assistant',
    surface: 'chat',
    tool: 'write_file',
    risk: 'write-local',
    ruleId: 'mode.allow',
    resource: '/work/p/src/a.ts',
    ...overrides,
  };
}

/** An approval request for call number `n`, expiring `ttl` ms after `now`. */
export function approvalInput(
  n: number,
  now: number,
  ttl = 60_000,
  overrides: Partial<CreateApprovalInput> = {},
) {
  return {
    id: `appr-${n}`,
    callId: `call-${n}`,
    runId: 'run-1',
    sessionId: 'session-1',
    taskId: 'task-1',
    agentId: 'assistant',
    parentAgentId: null,
    parentRunId: null,
    surface: 'scheduled',
    tool: 'shell',
    args: { command: 'make deploy' },
    target: null,
    risk: 'exec',
    reason: 'mode_ask',
    ruleId: 'mode.ask',
    idempotencyKey: `idem-${n}`,
    resumeCheckpoint: { runId: 'run-1', step: 3 },
    createdAt: now,
    expiresAt: now + ttl,
    ...overrides,
  } satisfies CreateApprovalInput;
}
