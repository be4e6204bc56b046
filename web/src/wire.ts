// The sidecar's wire format as this page reads it (runtime/events.ts, store approvals, the audit
// log, /work contract of GET /v1/actors). Only the fields the page shows.

export type Risk = 'read' | 'write-local' | 'exec' | 'external';

export interface Target {
  readonly argument: string;
  readonly input: string;
  readonly resolved: string | null;
  readonly root: string | null;
  readonly access: 'read' | 'read-write' | null;
}

export type Preview =
  | { readonly kind: 'command'; readonly command: string; readonly cwd: string | null }
  | {
      readonly kind: 'diff';
      readonly path: string;
      readonly diff: string | null;
      readonly truncated: boolean;
      readonly note: string | null;
    };

/** A pending approval as `GET /v1/inbox` lists it. */
export interface ApprovalRecord {
  readonly id: string;
  readonly callId: string;
  readonly runId: string | null;
  readonly sessionId: string;
  readonly taskId: string | null;
  readonly agentId: string;
  readonly surface: string | null;
  readonly tool: string;
  readonly args: unknown;
  readonly target: string | null;
  readonly risk: Risk;
  readonly reason: string;
  readonly ruleId: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly status: string;
  readonly decidedBy: string | null;
  readonly decisionReason: string | null;
  /** Cluster mode: the node that parked it (absent or null on a single runtime). */
  readonly node?: string | null;
}

interface Header {
  readonly runId: string;
  readonly ts: number;
  readonly agentId: string;
  readonly parentRunId: string | null;
}

export interface ApprovalRequested extends Header {
  readonly type: 'approval.requested';
  readonly approvalId: string;
  readonly callId: string;
  readonly tool: string;
  readonly risk: Risk;
  readonly reason: string;
  readonly rule: { readonly id: string; readonly source: string };
  readonly targets: readonly Target[];
  readonly args: unknown;
  readonly interaction: 'attended' | 'unattended';
  readonly sessionId: string;
  readonly expiresAt: number;
  readonly options: { readonly session: boolean; readonly standing: boolean };
  readonly preview: Preview | null;
}

export type FeedEvent =
  | (Header & { readonly type: 'run.started'; readonly sessionId: string; readonly surface: string })
  | (Header & { readonly type: 'model.text'; readonly delta: string })
  | (Header & { readonly type: 'model.delta'; readonly delta: string })
  | (Header & { readonly type: 'model.usage'; readonly step: number })
  | (Header & {
      readonly type: 'tool.proposed';
      readonly callId: string;
      readonly tool: string;
      readonly args: unknown;
    })
  | (Header & {
      readonly type: 'tool.decided';
      readonly callId: string;
      readonly tool: string;
      readonly decision: {
        readonly decision: string;
        readonly reason: string;
        readonly risk: Risk;
        readonly rule: { readonly id: string };
      };
    })
  | ApprovalRequested
  | (Header & {
      readonly type: 'approval.resolved';
      readonly approvalId: string;
      readonly decision: 'approved' | 'denied' | 'expired';
      readonly by: string | null;
      readonly reason: string | null;
    })
  | (Header & {
      readonly type: 'tool.completed';
      readonly callId: string;
      readonly tool: string;
      readonly ok: boolean;
      readonly content: string;
      readonly truncated: boolean;
    })
  | (Header & {
      readonly type: 'tool.denied';
      readonly callId: string;
      readonly tool: string;
      readonly reason: string;
      readonly message: string;
    })
  | (Header & { readonly type: 'run.parked'; readonly approvalId: string })
  | (Header & { readonly type: 'run.completed'; readonly text: string; readonly reason: string })
  | (Header & {
      readonly type: 'run.failed';
      readonly outcome: string;
      readonly reason: string;
      readonly message: string;
    });

/** An `actor.*` event of the live actor tree. */
export interface ActorEvent {
  readonly type: 'actor.created' | 'actor.state' | 'actor.stopped';
  readonly seq: number;
  readonly actor?: { readonly kind?: string; readonly id?: string };
}

/** A goal's stored state as `GET /v1/goals` lists it (the page does not show objective or evidence). */
export interface GoalRecord {
  readonly goalId: string;
  readonly status: string;
  readonly stopReason: string | null;
  readonly parked: boolean;
  readonly iteration: number;
  readonly maxIterations: number;
  readonly budget: {
    readonly modelCalls?: number;
    readonly toolCalls?: number;
    readonly wallTimeMs?: number;
    readonly tokens?: number;
    readonly costUsd?: number;
  };
  readonly used: {
    readonly modelCalls: number;
    readonly toolCalls: number;
    readonly wallTimeMs: number;
    /** Tokens and US dollars spent (absent from runtimes before issue 31's goal budgets). */
    readonly tokens?: number;
    readonly costUsd?: number;
  };
}

export interface GoalIteration {
  readonly iteration: number;
  readonly runId: string;
  readonly status: string;
  readonly outcome: string | null;
}

/** One configured goal loop: its stored state (null when never started) and its current epoch's iterations. */
export interface GoalEntry {
  readonly id: string;
  readonly agent: string;
  readonly record: GoalRecord | null;
  readonly iterations: readonly GoalIteration[];
}

export interface RunSummary {
  readonly runId: string;
  readonly agentId: string;
  readonly surface: string;
  readonly status: string;
  readonly parentRunId: string | null;
  readonly updatedAt: number;
  /** The conversation it belongs to and its title (absent from runtimes before issue 33). */
  readonly sessionId?: string | null;
  readonly title?: string | null;
}

/** A durable conversation as `GET /v1/sessions` lists it (no transcript). */
export interface SessionSummary {
  readonly sessionId: string;
  readonly agentId: string;
  readonly surface: string;
  readonly title: string | null;
  readonly runs: number;
  readonly activeRunId: string | null;
  readonly updatedAt: number;
}

/** One entry of a session's transcript (`GET /v1/sessions/:id/messages`): only the run it came from is read. */
export interface SessionMessage {
  readonly seq: number;
  readonly runId: string;
}

/** One call of a conversation, in place (GET /v1/runs/:id/conversation). */
export interface ConversationCall {
  readonly id: string;
  readonly tool: string;
  readonly args: unknown;
  readonly decision: {
    readonly decision: string;
    readonly reason: string | null;
    readonly ruleId: string | null;
    readonly risk: string | null;
  } | null;
  readonly approval: {
    readonly status: string;
    readonly by: string | null;
    readonly expiresAt: number | null;
  } | null;
  readonly result:
    | { readonly kind: 'tool.result'; readonly content: unknown }
    | { readonly kind: 'tool.denied'; readonly reason: string; readonly message: string }
    | { readonly kind: 'tool.failed' | 'tool.interrupted'; readonly message: string }
    | null;
  readonly child: RunConversation | null;
}

export interface RunConversation {
  readonly runId: string;
  readonly agentId: string;
  readonly status: string | null;
  readonly outcome: { readonly status: string; readonly reason: string; readonly message?: string } | null;
  readonly items: readonly (
    | { readonly kind: 'user'; readonly text: string }
    | {
        readonly kind: 'assistant';
        readonly text: string | null;
        readonly calls: readonly ConversationCall[];
      }
  )[];
}

export interface AuditEvent {
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly tool?: string | null;
  readonly risk?: string | null;
  readonly status?: string | null;
  readonly resource?: string | null;
  readonly ruleId?: string | null;
  readonly callId?: string | null;
  readonly detail?: unknown;
}

export type Verification =
  | { readonly ok: true; readonly count: number; readonly headSeq: number | null }
  | { readonly ok: false; readonly count: number; readonly brokenSeq: number; readonly reason: string };

export interface ActorNode {
  readonly id: string;
  readonly kind: 'agent' | 'run' | 'approval' | 'goal';
  readonly machine: string;
  readonly state: string;
  readonly parked: boolean;
  readonly status?: string;
  readonly tool?: string;
  readonly goalId?: string;
  readonly budgets?: Readonly<Record<string, { readonly used: number; readonly limit: number | null }>>;
  readonly children: readonly ActorNode[];
}

export interface GraphState {
  readonly id: string;
  readonly key: string;
  readonly parent: string | null;
  readonly type: string;
  readonly initial: string | null;
  readonly invokes: readonly string[];
}

export interface MachineGraph {
  readonly machine: string;
  readonly states: readonly GraphState[];
  readonly transitions: readonly { source: string; target: string; event: string; guard: string | null }[];
}

/** `GET /v1/inbox/:id`: what the policy saw (null when the run's context is gone). */
export interface ApprovalDetails {
  readonly targets: readonly Target[];
  readonly rule: { readonly id: string; readonly source: string };
  readonly options: { readonly session: boolean; readonly standing: boolean };
  readonly preview: Preview | null;
}

/** One link of a call's provenance chain (GET /v1/runs/:runId/calls/:callId/provenance). */
export interface ProvenanceStep {
  readonly step: string;
  readonly seq: number | null;
  readonly at: number | null;
  readonly summary: string;
}

/** Why a call ran (or did not), from the audit log: `closed` only when every link holds. */
export interface Provenance {
  readonly closed: boolean;
  readonly problems: readonly string[];
  readonly steps: readonly ProvenanceStep[];
}
