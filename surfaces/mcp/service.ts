import { randomUUID } from 'node:crypto';
import { parseRunId, SessionBusyError, type Runtime } from '../../runtime/index.ts';
import { MCP_SURFACE, type InboxEntryView, type RunView } from './schemas.ts';

/** A request of an MCP client that names something this surface does not have or show. */
export class McpSurfaceError extends Error {
  constructor(
    readonly code: 'unknown_agent' | 'unknown_run' | 'session_busy',
    message: string,
  ) {
    super(message);
  }
}

/**
 * What the MCP surface may do with the runtime, and nothing more: start an unattended run
 * (surface `mcp`), read the runs it started and the approvals they wait for. It holds no way
 * to decide an approval or to change roots, modes or grants — those stay with the human
 * surfaces (CLI, sidecar). It only shows runs started through MCP (and their sub-agents), so a
 * client never reads another surface's work.
 */
export class McpSurface {
  /** The session of this server's runs (session approvals a human gives apply to this connection's runs only). */
  readonly sessionId = `mcp:${randomUUID()}`;

  constructor(
    private readonly runtime: Runtime,
    /** Default and upper bound of a `run_task` call's wait, in ms. */
    private readonly maxWaitMs: number,
  ) {}

  /** The agents a client may name. */
  agents(): string[] {
    return this.runtime.read.agents().map((a) => a.id);
  }

  /**
   * Starts an unattended run and waits (at most `waitMs`, capped by the server's bound) until it
   * ends or parks on an approval; returns the run as it is then. The run goes on after the wait.
   * Its task is `mcp:<agent>`: standing approvals a human grants for it bind MCP runs of that agent.
   */
  async runTask(agent: string, text: string, waitMs?: number, session?: string): Promise<RunView> {
    if (!this.runtime.read.hasAgent(agent)) {
      throw new McpSurfaceError(
        'unknown_agent',
        `agent: no agent ${JSON.stringify(agent)} in the config; agents: ${this.agents().join(', ')}`,
      );
    }
    const parked = new Set<string>();
    const off = this.runtime.runs.onRunEvent((e) => {
      if (e.type === 'run.parked') parked.add(e.runId);
    });
    try {
      // With a session: a durable conversation (refused while another run holds it); without,
      // the run stands on its own in this server's session, as every MCP run did before.
      const runId = await this.runtime.runs
        .submit(agent, text, {
          surface: MCP_SURFACE,
          interaction: 'unattended',
          sessionId: session ?? this.sessionId,
          taskId: `${MCP_SURFACE}:${agent}`,
          conversation: session !== undefined,
        })
        .catch((err: unknown) => {
          if (err instanceof SessionBusyError)
            throw new McpSurfaceError('session_busy', `session: ${err.message}`);
          throw err;
        });
      const wait = Math.min(waitMs ?? this.maxWaitMs, this.maxWaitMs);
      const isParked = () => [...parked].some((id) => id === runId || id.startsWith(`${runId}/`));
      let timer: NodeJS.Timeout | undefined;
      let poll: NodeJS.Timeout | undefined;
      await Promise.race([
        this.runtime.waitForRun(runId),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, wait);
          poll = setInterval(() => {
            if (isParked()) resolve();
          }, 25);
        }),
      ]);
      clearTimeout(timer);
      clearInterval(poll);
      return this.view(runId, true);
    } finally {
      off();
    }
  }

  /** A run this surface started (or one of its sub-agents): status, outcome, pending approvals by id and tool. */
  getRun(runId: string): RunView {
    return this.view(runId);
  }

  /** The pending approvals of runs started through MCP (read-only: deciding is for the CLI and the sidecar). */
  listInbox(): InboxEntryView[] {
    return this.runtime.read
      .pendingApprovals()
      .filter((a) => a.surface === MCP_SURFACE)
      .map((a) => ({
        id: a.id,
        runId: a.runId,
        agent: a.agentId,
        tool: a.tool,
        risk: a.risk,
        reason: a.reason,
        createdAt: a.createdAt,
        expiresAt: a.expiresAt,
      }));
  }

  /** `submitted`: the run was just queued by this call (not stored yet is then `queued`, not unknown). */
  private view(runId: string, submitted = false): RunView {
    const stored = this.runtime.read.storedRun(runId);
    if (stored === null && submitted) {
      return {
        runId,
        agent: parseRunId(runId)?.agentId ?? runId,
        status: 'queued',
        outcome: null,
        pendingApprovals: [],
      };
    }
    if (stored === null || stored.surface !== MCP_SURFACE) {
      throw new McpSurfaceError('unknown_run', `runId: no run ${JSON.stringify(runId)} started through MCP`);
    }
    const outcome = stored.outcome;
    const pendingApprovals = this.runtime.read
      .pendingApprovals()
      .filter((a) => a.runId !== null && (a.runId === runId || a.runId.startsWith(`${runId}/`)))
      .map((a) => ({ id: a.id, tool: a.tool }));
    return {
      runId,
      agent: stored.agentId,
      status: stored.status,
      outcome:
        outcome === undefined || outcome === null
          ? null
          : {
              status: outcome.status,
              reason: outcome.reason,
              ...(outcome.text === undefined ? {} : { text: outcome.text }),
            },
      pendingApprovals,
    };
  }
}
