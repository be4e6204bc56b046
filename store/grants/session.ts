import { randomUUID } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { AuditLog } from '../audit/log.ts';
import { AuditKind, newAuditRecord } from '../audit/types.ts';
import { assertWritable, toStoredText } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { Id, parseInput } from '../schema.ts';
import { revokeRow } from './revoke.ts';
import type { GrantRow } from './revoke.ts';
import { GRANT_RECORD_VERSION, RevokeInput, SessionGrantInput } from './types.ts';
import type { SessionApproval } from './types.ts';

interface SessionRow extends GrantRow {
  session_id: string;
  agent_id: string | null;
}

const DURABLE = { durable: true } as const;

/**
 * Session approvals: "allow this tool (on this target) for the rest of this session". They
 * belong to exactly one session and never match another. Grants and revokes are durable and
 * audited in the same transaction.
 */
export class SessionApprovals {
  #insert: Statement<SessionRow> | null = null;
  private readonly active: Statement<[string], SessionRow>;
  #activeForAgent: Statement<[string, string], SessionRow> | null = null;
  #match: Statement<[string, string, string, string | null], SessionRow> | null = null;
  private readonly byId: Statement<[string], SessionRow>;
  private readonly allActive: Statement<[], SessionRow>;

  constructor(
    private readonly ctx: StoreContext,
    private readonly audit: AuditLog,
    /** The file's schema version: before 9 a grant has no agent, so it covers no agent's calls. */
    private readonly schemaVersion: number,
  ) {
    const db = ctx.db;
    this.active = db.prepare(
      'SELECT * FROM session_approvals WHERE session_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid',
    );
    this.byId = db.prepare('SELECT * FROM session_approvals WHERE id = ?');
    this.allActive = db.prepare(
      'SELECT * FROM session_approvals WHERE revoked_at IS NULL ORDER BY created_at, rowid',
    );
  }

  // Statements naming `agent_id` are prepared on first use: a read-only open of a file from
  // before schema 9 has no such column and must not fail on statements it never runs.
  private get insert(): Statement<SessionRow> {
    return (this.#insert ??= this.ctx.db.prepare(
      `INSERT INTO session_approvals (id, v, session_id, agent_id, tool, target, granted_by, created_at, revoked_at, revoked_by)
       VALUES (@id, @v, @session_id, @agent_id, @tool, @target, @granted_by, @created_at, @revoked_at, @revoked_by)`,
    ));
  }

  private get activeForAgent(): Statement<[string, string], SessionRow> {
    return (this.#activeForAgent ??= this.ctx.db.prepare(
      `SELECT * FROM session_approvals WHERE session_id = ? AND agent_id = ? AND revoked_at IS NULL
         ORDER BY created_at, rowid`,
    ));
  }

  private get match(): Statement<[string, string, string, string | null], SessionRow> {
    return (this.#match ??= this.ctx.db.prepare(
      `SELECT * FROM session_approvals WHERE session_id = ? AND agent_id = ? AND tool = ? AND revoked_at IS NULL
         AND (target IS NULL OR target = ?) ORDER BY target IS NULL, created_at LIMIT 1`,
    ));
  }

  /** Grants a session approval (audited `session_approval_granted`). */
  grant(input: SessionGrantInput): SessionApproval {
    assertWritable(this.ctx, 'sessionApprovals.grant');
    const req = parseInput(SessionGrantInput, input, 'sessionApprovals.grant', this.ctx.redactor);
    return this.ctx.tx.run(() => {
      const row: SessionRow = {
        id: req.id ?? randomUUID(),
        v: GRANT_RECORD_VERSION,
        session_id: req.sessionId,
        agent_id: req.agentId ?? null,
        tool: req.tool,
        target: toStoredText(this.ctx, req.target),
        granted_by: req.grantedBy,
        created_at: req.createdAt ?? this.ctx.clock(),
        revoked_at: null,
        revoked_by: null,
      };
      this.insert.run(row);
      const event = newAuditRecord(AuditKind.sessionApprovalGranted, row.created_at, {
        sessionApprovalId: row.id,
        grantedBy: row.granted_by,
        anyTarget: row.target === null,
      });
      event.sessionId = row.session_id;
      event.agentId = row.agent_id;
      event.runId = req.runId ?? null;
      event.tool = row.tool;
      event.resource = row.target;
      event.status = 'granted';
      this.audit.record(event);
      return toSessionApproval(row);
    }, DURABLE);
  }

  /** Revokes a session approval (audited); throws for unknown or already revoked ids. */
  revoke(id: string, input: RevokeInput): SessionApproval {
    assertWritable(this.ctx, 'sessionApprovals.revoke');
    parseInput(Id, id, 'sessionApprovals.revoke id', this.ctx.redactor);
    const req = parseInput(RevokeInput, input, 'sessionApprovals.revoke', this.ctx.redactor);
    return this.ctx.tx.run(() => {
      const at = req.at ?? this.ctx.clock();
      const row = revokeRow<SessionRow>(
        this.ctx.db,
        'session_approvals',
        id,
        req.revokedBy,
        at,
        this.ctx.redactor,
      );
      const event = newAuditRecord(AuditKind.sessionApprovalRevoked, at, {
        sessionApprovalId: row.id,
        revokedBy: req.revokedBy,
      });
      event.sessionId = row.session_id;
      event.tool = row.tool;
      event.resource = row.target;
      event.status = 'revoked';
      this.audit.record(event);
      return toSessionApproval(row);
    }, DURABLE);
  }

  /** The active (unrevoked) approvals of one session, of every agent. */
  listActive(sessionId: string): SessionApproval[] {
    return this.active.all(sessionId).map(toSessionApproval);
  }

  /** The active approvals that cover `agentId`'s calls in `sessionId` (what the policy sees). */
  listActiveFor(sessionId: string, agentId: string): SessionApproval[] {
    if (this.schemaVersion < 9) return [];
    return this.activeForAgent.all(sessionId, agentId).map(toSessionApproval);
  }

  /**
   * The active approval of `agentId` in `sessionId` that covers `tool` on `target`: an
   * exact-target grant first, else an any-target grant; null when none. The target is compared
   * after redaction, as it was stored.
   */
  find(sessionId: string, agentId: string, tool: string, target: string | null): SessionApproval | null {
    if (this.schemaVersion < 9) return null;
    const row = this.match.get(sessionId, agentId, tool, toStoredText(this.ctx, target));
    return row ? toSessionApproval(row) : null;
  }

  /** Every active (unrevoked) grant of this kind, oldest first (for `snotra grants list`). */
  listAllActive(): SessionApproval[] {
    return this.allActive.all().map(toSessionApproval);
  }

  /** One session approval by id (revoked ones included), or null. */
  get(id: string): SessionApproval | null {
    const row = this.byId.get(id);
    return row ? toSessionApproval(row) : null;
  }
}

function toSessionApproval(row: SessionRow): SessionApproval {
  return {
    id: row.id,
    sessionId: row.session_id,
    agentId: row.agent_id ?? null,
    tool: row.tool,
    target: row.target,
    grantedBy: row.granted_by,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    revokedBy: row.revoked_by,
  };
}
