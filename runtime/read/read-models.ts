import type { RunContext, RunOutcome } from '../../machines/run/types.ts';
import type { Mode } from '../../policy/risk.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import type {
  ApprovalRecord,
  AuditEvent,
  ChainBreak,
  GoalRecord,
  IterationRecord,
  RunStatus,
  RunSummary,
  Store,
  UndeliveredPage,
} from '../../store/index.ts';
import {
  approvalDetails,
  type ApprovalDetails,
  type ApprovalDetailsDeps,
} from '../approvals/approval-details.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { SandboxStatus } from '../sandbox/index.ts';
import { readStoredRun } from '../runs/stored-run.ts';
import { provenanceOf, type Provenance } from './provenance.ts';
import { runConversation, type RunConversation } from './conversation.ts';

/** A configured agent as a surface shows it: its id and its mode now (after any `setAgentMode`). */
export interface AgentView {
  readonly id: string;
  readonly mode: Mode;
}

/**
 * A workspace root as a surface shows it, as it is now (after any `setRoots`): what `/roots` of a
 * chat joined to a running runtime lists, not the roots of the chat's own config.
 */
export interface RootView {
  readonly id: string;
  readonly path: string;
  readonly access: WorkspaceRoot['access'];
  readonly primary: boolean;
  readonly source: WorkspaceRoot['source'];
  /** The root's deny globs (empty when it has none). */
  readonly deny: readonly string[];
}

/** One approval with what a human is shown beside it; `details` is null once its run's call is gone. */
export interface ApprovalView {
  readonly approval: ApprovalRecord;
  readonly details: ApprovalDetails | null;
}

/**
 * A run as the runs list shows it: its summary, the session it belongs to and that session's
 * title (a sub-agent's run: its top run's), null for a run outside any conversation.
 */
export interface RunListItem extends RunSummary {
  readonly sessionId: string | null;
  readonly title: string | null;
}

/** One stored run: its summary, its outcome (null while it has none) and its machine state value. */
export interface RunView {
  readonly run: RunSummary;
  readonly outcome: RunOutcome | null;
  /** The run machine's state value (a string, or an object for a nested state). */
  readonly state: unknown;
}

/** A stored run by its id as the MCP surface reads it (one row, no listing). */
export interface StoredRunView {
  readonly runId: string;
  readonly agentId: string;
  readonly surface: string;
  readonly status: RunStatus;
  readonly outcome: RunOutcome | null;
}

/** A configured goal with its stored state (null when never started) and the iterations of its epoch. */
export interface GoalView {
  readonly id: string;
  readonly agent: string;
  readonly record: GoalRecord | null;
  readonly iterations: IterationRecord[];
}

/** A run's audit events and the verification of the whole log's hash chain they are part of. */
export interface RunAuditView {
  readonly events: AuditEvent[];
  readonly verification:
    | { readonly ok: true; readonly count: number; readonly headSeq: number | null }
    | { readonly ok: false; readonly count: number; readonly brokenSeq: number; readonly reason: ChainBreak };
}

/** What the read models read from. */
export interface ReadModelDeps extends ApprovalDetailsDeps {
  readonly store: Store;
  readonly loaded: LoadedConfig;
  readonly mode: (agentId: string) => Mode;
  /** The workspace roots now (config, or a human's `setRoots` while running). */
  readonly roots: () => readonly WorkspaceRoot[];
  /** A live run's context (null when the run is not live). */
  readonly contextOf: (runId: string) => RunContext | null;
  readonly sandbox: SandboxStatus;
  /** Cluster mode: the cluster's pending approvals, each with the node that parked it. */
  readonly clusterInbox?: () => Array<ApprovalRecord & { readonly node: string | null }>;
}

/**
 * What surfaces read of a runtime: typed views of its agents, approvals, runs, audit and goals,
 * every value redacted with the store's redactor. Read-only; a surface changes state through the
 * runtime's own methods and facades (decide, runs.submit, goals.control, …). Surfaces never see the store itself.
 */
export class ReadModels {
  constructor(private readonly deps: ReadModelDeps) {}

  /** Redacts a value a surface is about to show or send (secrets registered with the runtime). */
  redact<T>(value: T): T {
    return this.deps.store.redactor.redact(value) as T;
  }

  /** The configured agents, in config order, with their modes now. */
  agents(): AgentView[] {
    return Object.keys(this.deps.loaded.config.agents).map((id) => ({ id, mode: this.deps.mode(id) }));
  }

  /** The workspace roots now, in order (after any `setRoots`), redacted. */
  roots(): RootView[] {
    return this.redact(
      this.deps.roots().map((r) => ({
        id: r.id,
        path: r.path,
        access: r.access,
        primary: r.primary,
        source: r.source,
        deny: [...(r.deny ?? [])],
      })),
    );
  }

  /** Whether the config has an agent of this id. */
  hasAgent(agentId: string): boolean {
    return Object.hasOwn(this.deps.loaded.config.agents, agentId);
  }

  /** Whether the config has a goal loop of this id. */
  hasGoal(goalId: string): boolean {
    return this.deps.loaded.config.surfaces.goalLoops.some((g) => g.id === goalId);
  }

  /** The OS sandbox shell and git children run in (`none` with the reason when there is none). */
  sandbox(): { readonly name: string; readonly reason?: string } {
    const s = this.deps.sandbox;
    return s.name === 'none' ? { name: s.name, reason: s.reason } : { name: s.name };
  }

  /**
   * The approvals waiting for a human (the Inbox), oldest first. On a cluster node: every pending
   * approval of the cluster, each with the `node` that parked it (decide any through any node).
   */
  pendingApprovals(): Array<ApprovalRecord & { readonly node?: string | null }> {
    const cluster = this.deps.clusterInbox;
    return this.redact(cluster === undefined ? this.deps.store.approvals.listPending({}) : cluster());
  }

  /**
   * One approval, with the details `approval.requested` showed live while it is pending and its
   * run still holds the call (the same builder, on the roots as they are now); null when unknown.
   */
  approval(approvalId: string): ApprovalView | null {
    const approval =
      this.deps.store.approvals.get(approvalId) ??
      // Cluster mode: a pending approval parked on another node (its record alone).
      this.deps.clusterInbox?.().find((a) => a.id === approvalId) ??
      null;
    if (approval === null) return null;
    const run = approval.runId === null ? null : this.deps.contextOf(approval.runId);
    // The run's decision is the one of the call at its cursor: only that call's is used.
    const call = run?.calls[run.cursor];
    const checkpoint = approval.resumeCheckpoint as { callId?: unknown } | null;
    const details =
      run != null && call !== undefined && call.id === checkpoint?.callId && approval.status === 'pending'
        ? approvalDetails(this.deps, run)
        : null;
    return this.redact({ approval, details });
  }

  /** Every stored run's summary with its conversation's title, oldest update first. */
  runs(): RunListItem[] {
    const list = this.deps.store.snapshots.list();
    const titles = this.deps.store.sessions.runTitles();
    const parent = new Map(list.map((r) => [r.runId, r.parentRunId]));
    const top = (runId: string): string => {
      let id = runId;
      // Bounded: a parent chain is never longer than the list (and never a cycle that matters).
      for (let i = 0; i < list.length; i++) {
        const up = parent.get(id) ?? null;
        if (up === null) break;
        id = up;
      }
      return id;
    };
    return this.redact(
      list.map((r) => {
        const t = titles.get(r.runId) ?? titles.get(top(r.runId));
        return { ...r, sessionId: t?.sessionId ?? null, title: t?.title ?? null };
      }),
    );
  }

  /** One stored run with its outcome and state, or null when there is none. */
  run(runId: string): RunView | null {
    const summary = this.deps.store.snapshots.list().find((r) => r.runId === runId);
    if (summary === undefined) return null;
    const stored = this.deps.store.snapshots.get(summary.runId);
    const { context, value } = stored === null ? { context: null, value: null } : readStoredRun(stored);
    return this.redact({ run: summary, outcome: context?.outcome ?? null, state: value });
  }

  /** A run as a conversation, sub-agents nested in place (redacted), or null when there is no such run. */
  conversation(runId: string): RunConversation | null {
    return this.redact(runConversation(this.deps, runId));
  }

  /** A stored run read by its id alone (no listing), or null when there is none. */
  storedRun(runId: string): StoredRunView | null {
    const stored = this.deps.store.snapshots.get(runId);
    if (stored === null) return null;
    return this.redact({
      runId: stored.runId,
      agentId: stored.agentId,
      surface: stored.surface,
      status: stored.status,
      outcome: readStoredRun(stored).context?.outcome ?? null,
    });
  }

  /** A stored run's audit events with the chain's verification, or null when there is no such run. */
  runAudit(runId: string): RunAuditView | null {
    if (this.deps.store.snapshots.list().find((r) => r.runId === runId) === undefined) return null;
    // The whole log's hash chain is walked: a run's events verify only as part of it.
    const chain = this.deps.store.audit.verifyChain();
    const verification = chain.ok
      ? ({ ok: true, count: chain.count, headSeq: chain.headSeq } as const)
      : ({ ok: false, count: chain.count, brokenSeq: chain.brokenSeq, reason: chain.reason } as const);
    return this.redact({ events: this.deps.store.audit.list({ runId }), verification });
  }

  /**
   * Why call `callId` of run `runId` ran (or did not): its chain from proposal to outcome with
   * the audit sequence numbers (provenance.ts), or null when the log has no event of that call.
   */
  provenance(runId: string, callId: string): Provenance | null {
    return this.redact(provenanceOf(this.deps.store, runId, callId));
  }

  /** Every configured goal, in config order, with its stored state and iterations. */
  goals(): GoalView[] {
    const { loaded, store } = this.deps;
    return this.redact(
      loaded.config.surfaces.goalLoops.map((g) => {
        const record = store.goals.get(g.id);
        const iterations = record === null ? [] : store.goals.iterations(g.id, record.epoch);
        return { id: g.id, agent: g.agent, record, iterations };
      }),
    );
  }

  /** A goal's stored state (null when never started). */
  goal(goalId: string): GoalRecord | null {
    return this.redact(this.deps.store.goals.get(goalId));
  }

  /**
   * A page of the platform reply parts not delivered (failed, unknown, still to send), newest
   * first, and the cursor of the next page. Throws BadCursorError for a cursor it did not make.
   */
  undeliveredReplies(page: { cursor?: string | undefined; limit: number }): UndeliveredPage {
    return this.redact(this.deps.store.platforms.outbound.undeliveredPage(page));
  }
}
