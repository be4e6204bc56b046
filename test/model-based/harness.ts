// Model-based restart testing of the run machine with its real effects (policy, Inbox, ledger,
// snapshots through the RunHost) and scripted model and tools. A "process" is a RunHost over the
// store; a crash freezes every effect of that process at an await point (the effects never
// settle and nothing of it runs again), and a restart is a new RunHost that restores the run
// from what was persisted, as the runtime does at boot.
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromPromise, type AnyActorLogic, type InspectionEvent } from 'xstate';
import { provideRunMachine, type SettledEffect } from '../../actors/run/effects.ts';
import { toObservation } from '../../actors/tools/observation.ts';
import type { ToolExecutor } from '../../actors/tools/types.ts';
import type { ModelProvider } from '../../actors/model/provider.ts';
import type { ModelStepOutput, RunContext, RunOutcome } from '../../machines/run/types.ts';
import { parseConfig, type LoadedConfig } from '../../runtime/config/load.ts';
import { agentPolicyContext } from '../../runtime/policy/agent-context.ts';
import { createPolicyEnvironment, type PolicyEnvironment } from '../../runtime/policy/environment.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';
import { ApprovalService } from '../../runtime/approvals/approval-service.ts';
import { RunHost } from '../../runtime/runs/run-host.ts';
import { clockFromNow, systemClock } from '../../runtime/time/clock.ts';
import type { SyncFile, SyncFileNow } from '../../store/group-sync.ts';
import { openStore, Redactor, type Store } from '../../store/index.ts';
import { stateIds } from './graph.ts';

/** What the effects produce for one call of a scenario. */
export const CallKind = {
  allowOk: 'allow-ok',
  allowFail: 'allow-fail',
  deny: 'deny',
  approveOk: 'approve-ok',
  approveFail: 'approve-fail',
  approvalDenied: 'approval-denied',
  approvalExpired: 'approval-expired',
} as const;
export type CallKind = (typeof CallKind)[keyof typeof CallKind];

/** One path through the run: model steps of calls, then a final answer; budgets. */
export interface Scenario {
  readonly name: string;
  readonly steps: readonly (readonly CallKind[])[];
  readonly toolBudget: number;
  readonly modelBudget: number;
  /** The run's wall-time budget (default 10 minutes). */
  readonly wallTimeMs?: number;
  /** A breach parks on a budget request (approved by the harness) instead of failing. */
  readonly onBudget?: 'ask';
}

const WALL_TIME_MS = 600_000;

const needsApproval = (k: CallKind) => k.startsWith('approv');

/** The args of a call of this kind in the test workspace (ask mode decides it as the kind says). */
function callFor(kind: CallKind, id: string) {
  switch (kind) {
    case CallKind.allowOk:
    case CallKind.allowFail:
      return { id, tool: 'read_file', args: { path: `${kind}-${id}.txt` } };
    case CallKind.deny:
      return { id, tool: 'read_file', args: { path: '/etc/shadow' } };
    default:
      // An external call that is not idempotent: executed at most once, whatever happens.
      return { id, tool: 'send_message', args: { channel: 'ops', text: `${kind}-${id}` } };
  }
}

/** What happened across every process of one run: executions per idempotency key, approvals decided. */
export interface RunRecord {
  readonly executions: Map<string, number>;
  /** Idempotency keys of calls executed before their approval was decided (must stay empty). */
  readonly executedBeforeApproval: string[];
  readonly decided: Set<string>;
  readonly states: Set<string>;
  /** Idempotency keys of calls executed after the run was cancelled or its deadline had passed (must stay empty). */
  readonly executedAfterEnd: string[];
  /** Idempotency keys of calls executed again after their ledger row was final (completed or failed) at the crash. */
  readonly executedAgainAfterDone: string[];
  /** The calls whose ledger row was final at the crash. */
  readonly finalAtCrash: Set<string>;
  /** Whether the cancel of `RunOptions.cancelAt` reached a live run (false: it had already ended). */
  cancelled: boolean;
}

interface Process {
  crashed: boolean;
  host: RunHost;
}

const never = <T>() => new Promise<T>(() => {});

function gate(logic: AnyActorLogic, proc: () => Process, onEffect: () => void): AnyActorLogic {
  const create = (logic as unknown as { config: (args: unknown) => Promise<unknown> }).config;
  return fromPromise(async (args) => {
    onEffect();
    if (proc().crashed) return never();
    const result = await create(args);
    onEffect();
    if (proc().crashed) return never();
    return result;
  });
}

/** A workspace, a store and the policy of one agent in `ask` mode; runs scenarios with crashes. */
export class RestartHarness {
  readonly dir: string;
  readonly store: Store;
  readonly loaded: LoadedConfig;
  #env!: PolicyEnvironment;
  readonly #owned: boolean;

  private constructor(
    /** Replaces the effects of the provided machine (a mutant for the self-test). */
    private readonly mutate?: (
      deps: Parameters<typeof provideRunMachine>[0],
    ) => Record<string, AnyActorLogic>,
    /** An existing directory (a harness in a child process); otherwise a fresh temporary one. */
    dir?: string,
    private readonly options: HarnessOptions = {},
  ) {
    this.#owned = dir === undefined;
    this.dir = dir ?? realpathSync(mkdtempSync(join(tmpdir(), 'snotra-mbt-')));
    mkdirSync(join(this.dir, 'project'), { recursive: true });
    this.loaded = parseConfig(
      JSON.stringify({
        stateDir: 'state',
        workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
        agents: { worker: { mode: 'ask', tools: ['read_file', 'send_message'] } },
      }),
      join(this.dir, 'snotra.config.json'),
      this.dir,
    );
    this.store = openStore({
      path: join(this.dir, 'state', 'snotra.db'),
      redactor: new Redactor(),
      ...(options.syncFile ? { syncFile: options.syncFile } : {}),
      ...(options.syncFileNow ? { syncFileNow: options.syncFileNow } : {}),
    });
  }

  static async create(
    mutate?: RestartHarness['mutate'],
    dir?: string,
    options?: HarnessOptions,
  ): Promise<RestartHarness> {
    const h = new RestartHarness(mutate, dir, options);
    h.#env = await createPolicyEnvironment(h.loaded);
    return h;
  }

  close(): void {
    this.store.close();
    if (this.#owned) rmSync(this.dir, { recursive: true, force: true });
  }

  /** The executions of every process of this directory (a child process killed with SIGKILL keeps them here). */
  static executionsIn(dir: string): Pick<RunRecord, 'executions' | 'executedBeforeApproval'> {
    const executions = new Map<string, number>();
    const executedBeforeApproval: string[] = [];
    const file = join(dir, EXECUTIONS);
    const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    for (const line of lines) {
      const [key, early] = line.split('\t') as [string, string];
      executions.set(key, (executions.get(key) ?? 0) + 1);
      if (early === 'early') executedBeforeApproval.push(key);
    }
    return { executions, executedBeforeApproval };
  }

  /**
   * Runs a scenario; when `crashAt` is given, the process crashes at that await point (counted
   * over every effect start and end), and a new process restores the run and finishes it.
   * Returns the outcome, the record and how many await points the run passed.
   */
  async run(s: Scenario, runId: string, crashAt: number | null, opts: RunOptions = {}) {
    const store = this.store;
    const dir = this.dir;
    const approvalIds = new Set<string>();
    const record: RunRecord = {
      executions: new Map(),
      executedBeforeApproval: [],
      decided: new Set(),
      states: new Set(),
      executedAfterEnd: [],
      executedAgainAfterDone: [],
      finalAtCrash: new Set(),
      cancelled: false,
    };
    // The clock of every process; `deadlinePassed` moves the restarted process's past the deadline.
    let skew = 0;
    const clock = () => Date.now() + skew;
    let ending = false;
    // The calls whose ledger row was final when the process crashed: never executed again.
    const doneAtCrash = record.finalAtCrash;
    let points = 0;
    let current: Process;
    let ended: ((o: RunOutcome) => void) | null = null;
    const done = new Promise<RunOutcome>((r) => (ended = r));
    const registry = registryFromConfig(this.loaded);
    const model: ModelProvider = {
      step: async ({ step }): Promise<ModelStepOutput> => {
        const calls = s.steps[step];
        if (calls === undefined) return { kind: 'final', text: 'done' };
        return { kind: 'calls', calls: calls.map((k, i) => callFor(k, `s${step}c${i}`)) };
      },
    };
    const executor = (fail: boolean): ToolExecutor => ({
      async execute(_args, ctx) {
        if (current.crashed) return never();
        const key = ctx.idempotencyKey;
        record.executions.set(key, (record.executions.get(key) ?? 0) + 1);
        if (ending) record.executedAfterEnd.push(key);
        if (doneAtCrash.has(key)) record.executedAgainAfterDone.push(key);
        const approval = store.approvals.listPending({}).find((a) => a.idempotencyKey === key);
        if (approval !== undefined) record.executedBeforeApproval.push(key);
        // Durable before the effect "happens", as a real side effect would be (survives SIGKILL);
        // the fresh process records its own too, so a call repeated across processes is counted.
        if (opts.kill === true || opts.resume === true)
          appendFileSync(join(dir, EXECUTIONS), `${key}\t${approval === undefined ? 'ok' : 'early'}\n`);
        if (fail) throw new Error('tool failed');
        return { ok: true };
      },
    });
    // Which tool fails is data of the scenario: the executor looks the call up by its path.
    const executors: Record<string, ToolExecutor> = {
      read_file: {
        execute: (args, ctx) =>
          executor(String((args as { path: string }).path).startsWith('allow-fail')).execute(args, ctx),
      },
      send_message: {
        execute: (args, ctx) =>
          executor(String((args as { text: string }).text).startsWith('approve-fail')).execute(args, ctx),
      },
    };
    const policyFor = (ctx: RunContext) =>
      agentPolicyContext(this.loaded, 'worker', {
        registry,
        paths: this.#env.paths,
        shell: this.#env.shell,
        sandboxed: true,
        interaction: ctx.interaction,
        sessionId: ctx.sessionId,
        taskId: ctx.taskId,
      });
    const spawnProcess = (): Process => {
      const proc: Process = { crashed: false, host: undefined as unknown as RunHost };
      // States visited, transient ones (left by an eventless transition in the same step) included.
      const inspect = (_runId: string, e: InspectionEvent) => {
        if (e.type !== '@xstate.snapshot' && e.type !== '@xstate.microstep') return;
        if ((e.actorRef as { sessionId?: string }).sessionId !== (e.rootId as string | undefined)) return;
        const snapshot = e.snapshot as { value?: unknown };
        for (const id of stateIds(snapshot.value, 'run')) record.states.add(id);
        if (e.type === '@xstate.microstep') {
          for (const t of e._transitions) for (const target of t.target ?? []) record.states.add(target.id);
        }
      };
      proc.host = new RunHost(this.store, clockFromNow(clock), inspect);
      const deps = {
        store: this.store,
        model,
        registry,
        executors,
        clock,
        approvalTtlMs: 60_000,
        policyFor,
        contextFor: () => ({
          roots: policyFor({} as RunContext).roots,
          paths: this.#env.paths,
          signal: new AbortController().signal,
          secrets: { resolve: async () => '' },
        }),
        observe: (outcome: Parameters<typeof toObservation>[0]) =>
          toObservation(outcome, this.store.redactor),
        runMeta: () => ({ sessionId: 'mbt', agentId: 'worker', surface: 'scheduled' }),
        onApprovalOpened: (approval: { id: string; status: string }) => {
          if ((opts.kill === true || opts.resume === true) && !approvalIds.has(approval.id))
            appendFileSync(join(this.dir, APPROVALS), `${approval.id}\n`);
          approvalIds.add(approval.id);
          if (approval.status === 'pending') setImmediate(() => decide(approval.id));
        },
        replaying: (id: string) => proc.host.wasRestored(id),
        persistRun: (id: string, settled?: SettledEffect) => proc.host.persistCurrent(id, settled),
      };
      const provided = provideRunMachine(deps as Parameters<typeof provideRunMachine>[0]);
      const actors = {
        ...(provided.implementations.actors as Record<string, AnyActorLogic>),
        ...this.mutate?.(deps as never),
      };
      const gated = Object.fromEntries(
        Object.entries(actors).map(([name, logic]) => [
          name,
          gate(
            logic,
            () => proc,
            () => {
              if (proc.crashed) return;
              points++;
              if (opts.cancelAt === points)
                // A human cancels the run here (through the host, as the surfaces do), once this
                // step of the machine is done.
                queueMicrotask(() => {
                  record.cancelled = current.host.cancel(runId, 'mbt');
                  ending = true;
                });
              if (crashAt === null || points !== crashAt) return;
              // A real crash: the process dies here, between two awaits of an effect.
              if (opts.kill === true) process.kill(process.pid, 'SIGKILL');
              proc.crashed = true;
              for (const key of record.executions.keys()) {
                const status = store.ledger.lookup(key)?.status;
                if (status === 'completed' || status === 'failed') doneAtCrash.add(key);
              }
            },
          ),
        ]),
      );
      proc.host.wire(provided.provide({ actors: gated }) as never, {
        onStatus: () => {},
        onEnded: (_id, outcome) => {
          if (!proc.crashed) ended?.(outcome);
        },
      });
      return proc;
    };
    const decide = (approvalId: string) => {
      if (current.crashed) return; // The decision arrives after the restart (the Inbox keeps it).
      const approval = this.store.approvals.get(approvalId);
      if (approval === null || approval.status !== 'pending') return;
      const kind = String((approval.args as { text?: string } | null)?.text ?? '').split('-s')[0] ?? '';
      record.decided.add(approval.idempotencyKey);
      if (kind === CallKind.approvalExpired) this.store.approvals.expireDue(approval.expiresAt + 1);
      else if (this.options.decideThroughService === true) {
        // As the runtime decides: a deferred commit, delivered at once, one fsync before it returns.
        new ApprovalService(
          this.store,
          { deliver: (a) => current.host.deliver(a), resolved: () => {} },
          systemClock,
        ).decide(approvalId, kind === CallKind.approvalDenied ? 'denied' : 'approved', 'tester');
        return;
      } else
        this.store.approvals.decide(
          approvalId,
          kind === CallKind.approvalDenied ? 'denied' : 'approved',
          'tester',
          Date.now(),
        );
      const after = this.store.approvals.get(approvalId);
      if (after !== null) current.host.deliver(after);
    };
    current = spawnProcess();
    const restart = () => {
      if (opts.deadlinePassed === true) {
        // The run's wall-time deadline passed while no process ran it.
        skew = s.wallTimeMs ?? WALL_TIME_MS;
        ending = true;
      }
      current = spawnProcess();
      this.store.ledger.markInterrupted({ runId });
      current.host.restore(runId);
      // As the runtime's boot: a parked run's pending approval is found in the store (the Inbox a
      // human decides from), also one the crashed process never got to report.
      for (const a of this.store.approvals.listPending({})) if (a.runId === runId) approvalIds.add(a.id);
      for (const id of approvalIds) {
        const a = this.store.approvals.get(id);
        if (a === null) continue;
        if (a.status === 'pending') decide(id);
        else current.host.deliver(a);
      }
    };
    // A run killed before its first snapshot was stored was never acknowledged on the bus: it is
    // redelivered and starts anew (Runtime's agent consumer); the harness does the same.
    if (opts.resume === true && this.store.snapshots.has(runId)) {
      // A fresh process after the one that ran this run was killed: restore it as the runtime does at boot.
      const file = join(this.dir, APPROVALS);
      if (existsSync(file))
        for (const id of readFileSync(file, 'utf8').split('\n').filter(Boolean)) approvalIds.add(id);
      current.crashed = true;
      restart();
    } else
      current.host.start({
        runId,
        agentId: 'worker',
        sessionId: 'mbt',
        taskId: null,
        parentRunId: null,
        surface: 'scheduled',
        interaction: 'unattended',
        message: 'go',
        budget: {
          modelCalls: s.modelBudget,
          toolCalls: s.toolBudget,
          wallTimeMs: s.wallTimeMs ?? WALL_TIME_MS,
        },
        ...(s.onBudget === undefined ? {} : { onBudget: s.onBudget }),
        startedAt: clock(),
      });
    if (crashAt !== null && opts.resume !== true) {
      const crashed = await Promise.race([done.then(() => false), waitFor(() => current.crashed)]);
      if (crashed) {
        await new Promise((r) => setImmediate(r)); // a coalesced snapshot write of the dead process may land
        restart();
      }
    }
    const outcome = await Promise.race([done, timeout(10_000, `${s.name} crash ${String(crashAt)}`)]);
    const ctx = (this.store.snapshots.get(runId)?.snapshot as { context?: RunContext } | undefined)?.context;
    return { outcome, record, points, context: ctx ?? null };
  }
}

async function waitFor(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 2000; i++) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 1));
  }
  return check();
}

function timeout(ms: number, what: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms).unref());
}

export { needsApproval };

/** The file where executions are recorded when a run may be killed with SIGKILL. */
const EXECUTIONS = 'executions.log';
/** The approvals a killed process opened (a fresh process delivers or decides them). */
const APPROVALS = 'approvals.log';

/** How the harness opens its store and decides. */
export interface HarnessOptions {
  /** The store's flushes (a power-loss simulation records what each one made durable). */
  readonly syncFile?: SyncFile;
  readonly syncFileNow?: SyncFileNow;
  /** Decide through the runtime's ApprovalService (deferred commit, delivery, then one fsync). */
  readonly decideThroughService?: boolean;
}

/** How a run is driven: killed for real at its crash point, or resumed in a fresh process. */
export interface RunOptions {
  /** At the crash point the process kills itself with SIGKILL (in a child process only). */
  readonly kill?: boolean;
  /** Restores the run from the store (after a killed process) instead of starting it. */
  readonly resume?: boolean;
  /** At this await point (counted as crash points are) a human cancels the run. */
  readonly cancelAt?: number;
  /** The process restarted after the crash finds the run's wall-time deadline passed. */
  readonly deadlinePassed?: boolean;
}
