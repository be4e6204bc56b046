import { randomUUID } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { AuditLog } from '../audit/log.ts';
import { AuditKind, newAuditRecord } from '../audit/types.ts';
import { assertWritable, toStoredText } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { Id, parseInput } from '../schema.ts';
import { revokeRow } from './revoke.ts';
import type { GrantRow } from './revoke.ts';
import { GRANT_RECORD_VERSION, RevokeInput, StandingGrantInput } from './types.ts';
import type { StandingApproval } from './types.ts';

interface StandingRow extends GrantRow {
  owner_task_id: string;
  target: string;
}

const DURABLE = { durable: true } as const;

/**
 * Standing approvals: one exact tool on one exact target, owned by one task or automation,
 * valid until revoked. Which tools may have one (external tools with a declared target
 * argument, DESIGN.md §1 invariant 7) is the policy's decision; this store only keeps them.
 * Grants and revokes are durable and audited in the same transaction.
 */
export class StandingApprovals {
  private readonly insert: Statement<StandingRow>;
  private readonly active: Statement<[string], StandingRow>;
  private readonly match: Statement<[string, string, string], StandingRow>;
  private readonly byId: Statement<[string], StandingRow>;
  private readonly allActive: Statement<[], StandingRow>;

  constructor(
    private readonly ctx: StoreContext,
    private readonly audit: AuditLog,
  ) {
    const db = ctx.db;
    this.insert = db.prepare(
      `INSERT INTO standing_approvals (id, v, owner_task_id, tool, target, granted_by, created_at, revoked_at,
         revoked_by)
       VALUES (@id, @v, @owner_task_id, @tool, @target, @granted_by, @created_at, @revoked_at, @revoked_by)`,
    );
    this.active = db.prepare(
      'SELECT * FROM standing_approvals WHERE owner_task_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid',
    );
    this.match = db.prepare(
      `SELECT * FROM standing_approvals
       WHERE owner_task_id = ? AND tool = ? AND target = ? AND revoked_at IS NULL ORDER BY created_at LIMIT 1`,
    );
    this.byId = db.prepare('SELECT * FROM standing_approvals WHERE id = ?');
    this.allActive = db.prepare(
      'SELECT * FROM standing_approvals WHERE revoked_at IS NULL ORDER BY created_at, rowid',
    );
  }

  /** Grants a standing approval (audited `standing_approval_granted`). */
  grant(input: StandingGrantInput): StandingApproval {
    assertWritable(this.ctx, 'standingApprovals.grant');
    const req = parseInput(StandingGrantInput, input, 'standingApprovals.grant', this.ctx.redactor);
    return this.ctx.tx.run(() => {
      const row: StandingRow = {
        id: req.id ?? randomUUID(),
        v: GRANT_RECORD_VERSION,
        owner_task_id: req.ownerTaskId,
        tool: req.tool,
        target: toStoredText(this.ctx, req.target) ?? '',
        granted_by: req.grantedBy,
        created_at: req.createdAt ?? this.ctx.clock(),
        revoked_at: null,
        revoked_by: null,
      };
      this.insert.run(row);
      const event = newAuditRecord(AuditKind.standingApprovalGranted, row.created_at, {
        ownerTaskId: row.owner_task_id,
        grantedBy: row.granted_by,
      });
      event.tool = row.tool;
      event.resource = row.target;
      event.status = 'granted';
      event.standingApprovalId = row.id;
      this.audit.record(event);
      return toStandingApproval(row);
    }, DURABLE);
  }

  /** Revokes a standing approval (audited); throws for unknown or already revoked ids. */
  revoke(id: string, input: RevokeInput): StandingApproval {
    assertWritable(this.ctx, 'standingApprovals.revoke');
    parseInput(Id, id, 'standingApprovals.revoke id', this.ctx.redactor);
    const req = parseInput(RevokeInput, input, 'standingApprovals.revoke', this.ctx.redactor);
    return this.ctx.tx.run(() => {
      const at = req.at ?? this.ctx.clock();
      const row = revokeRow<StandingRow>(
        this.ctx.db,
        'standing_approvals',
        id,
        req.revokedBy,
        at,
        this.ctx.redactor,
      );
      const event = newAuditRecord(AuditKind.standingApprovalRevoked, at, {
        ownerTaskId: row.owner_task_id,
        revokedBy: req.revokedBy,
      });
      event.tool = row.tool;
      event.resource = row.target;
      event.status = 'revoked';
      event.standingApprovalId = row.id;
      this.audit.record(event);
      return toStandingApproval(row);
    }, DURABLE);
  }

  /** The active (unrevoked) standing approvals of one task or automation. */
  listActive(ownerTaskId: string): StandingApproval[] {
    return this.active.all(ownerTaskId).map(toStandingApproval);
  }

  /**
   * The active standing approval of `ownerTaskId` for exactly `tool` on exactly `target`, or
   * null. The target is compared after redaction, as it was stored.
   */
  find(ownerTaskId: string, tool: string, target: string): StandingApproval | null {
    const row = this.match.get(ownerTaskId, tool, toStoredText(this.ctx, target) ?? '');
    return row ? toStandingApproval(row) : null;
  }

  /** Every active (unrevoked) grant of this kind, oldest first (for `snotra grants list`). */
  listAllActive(): StandingApproval[] {
    return this.allActive.all().map(toStandingApproval);
  }

  /** One standing approval by id (revoked ones included), or null. */
  get(id: string): StandingApproval | null {
    const row = this.byId.get(id);
    return row ? toStandingApproval(row) : null;
  }
}

function toStandingApproval(row: StandingRow): StandingApproval {
  return {
    id: row.id,
    ownerTaskId: row.owner_task_id,
    tool: row.tool,
    target: row.target,
    grantedBy: row.granted_by,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    revokedBy: row.revoked_by,
  };
}
