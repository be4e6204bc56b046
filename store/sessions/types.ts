/** A durable conversation as the store holds it. */
export interface SessionRecord {
  readonly sessionId: string;
  readonly agentId: string;
  /** The primary root's path when the session began (`snotra run --continue` looks here). */
  readonly workspace: string;
  /** The surface that began it (`cli`, `chat`, `sidecar`, `mcp`, `platform`, …). */
  readonly surface: string;
  /** Its first user message, shortened and redacted; null before its first run. */
  readonly title: string | null;
  /** How many transcript entries it holds. */
  readonly entries: number;
  /** How many runs appended to it. */
  readonly runs: number;
  /** The run that holds the session now (one at a time), or null. */
  readonly activeRunId: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** One transcript entry of a session (redacted), with the run that added it. */
export interface SessionEntry {
  readonly seq: number;
  readonly runId: string;
  readonly entry: unknown;
}

/** What a session's first claim records about it. */
export interface SessionMeta {
  readonly agentId: string;
  readonly workspace: string;
  readonly surface: string;
  /** The message of the run that claims it: the title of a session that has none yet. */
  readonly firstMessage?: string;
}

/** The answer to a claim: the session is this run's (with the entries it starts from), or another run holds it. */
export type ClaimSessionResult =
  | { readonly ok: true; readonly entries: number; readonly created: boolean }
  | { readonly ok: false; readonly activeRunId: string; readonly agentId: string }
  | { readonly ok: false; readonly activeRunId: null; readonly agentId: string };

/** What a run's end appends: its transcript entries, in order, and how it ended. */
export interface AppendRunInput {
  readonly sessionId: string;
  readonly runId: string;
  readonly status: string;
  readonly entries: readonly unknown[];
}
