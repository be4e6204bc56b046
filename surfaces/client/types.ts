import type { GrantScope, RunFeedEvent, RunOutcome, Runtime } from '../../runtime/index.ts';

/** What a decision returns (the store's verdict: recorded, or why not). */
export type DecideResult = ReturnType<Runtime['decide']>;

/** How a message is started through a client. */
export interface ClientSubmit {
  readonly agent: string;
  readonly text: string;
  readonly session?: string;
  /** The workspace's latest session (`--continue`). */
  readonly continue?: boolean;
  readonly unattended: boolean;
}

/**
 * "A runtime I talk to": the one abstraction `snotra run` (and what is built on its path) uses,
 * whether the runtime runs in this process (`embedded`) or in a running `snotra start` joined
 * over its join socket (`joined`). Run feed events reach the `onRunEvent` the client was opened
 * with, from the moment it is open.
 */
export interface RuntimeClient {
  readonly kind: 'embedded' | 'joined';
  /** The pid of the process the runtime runs in. */
  readonly pid: number;
  /** The agents of the runtime's config. */
  readonly agents: readonly string[];
  /** Starts a run and resolves with its id. */
  submit(message: ClientSubmit): Promise<string>;
  /** Resolves when the run ends (at once when it already did). */
  waitForRun(runId: string): Promise<RunOutcome>;
  /** Decides an approval as the local user. */
  decideAsync(
    approvalId: string,
    decision: 'approved' | 'denied',
    user: string,
    reason?: string,
  ): Promise<DecideResult>;
  /** Approves with a session or standing grant; an ineligible scope rejects. */
  approveWithGrant(approvalId: string, scope: GrantScope, user: string): Promise<DecideResult>;
  /** Embedded: stops the runtime. Joined: leaves it (its runs go on). */
  close(): Promise<void>;
}

/** The feed listener a client is opened with. */
export type ClientFeed = (event: RunFeedEvent) => void;
