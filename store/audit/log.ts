import type { Statement } from 'better-sqlite3';
import { assertWritable, toStoredText } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { StateErrorCode, StoreStateError } from '../errors.ts';
import { parseInput } from '../schema.ts';
import { AUDIT_ROW_EVENTS, GENESIS_HASH, eventBody, hashBody, verifyRows } from './chain.ts';
import type { ChainVerification, HashedFields } from './chain.ts';
import { encodeAuditBody } from './encoding.ts';
import { auditReader, eventOf } from './rows.ts';
import type { AuditReader } from './rows.ts';
import { AUDIT_EVENT_VERSION, AuditEventInput, fastAuditEventInput } from './types.ts';
import type { AuditEvent, AuditRecord } from './types.ts';

export type { AuditRecord } from './types.ts';

/** Filters for reading the log. */
export interface AuditQuery {
  /** Only events of this run. */
  readonly runId?: string;
  /** Only events with a seq greater than this. */
  readonly afterSeq?: number;
  /** At most this many events (default: all). */
  readonly limit?: number;
}

/**
 * The append-only, hash-chained audit log. Events are never updated or deleted (SQLite
 * triggers refuse it); each event's hash is the sha256 of the previous event's hash and its own
 * content (several events of one run and transaction may share a row; the chain is per event),
 * so `verifyChain` finds the first altered, removed or spliced event. Truncating the
 * tail is not detectable from the file alone: compare `verifyChain().headSeq` with a copy kept
 * elsewhere if that matters.
 */
export class AuditLog {
  private readonly reader: AuditReader;
  private readonly insert: Statement<[number, number, string | null, string, Buffer]> | null;
  /**
   * Events recorded in the open transaction and not yet written: consecutive events of one run
   * share a row (see migration 3). Written before the commit, before a savepoint and before any
   * read; forgotten on rollback.
   */
  private readonly pending: { runId: string | null; firstSeq: number; bodies: string[]; hashes: Buffer[] } = {
    runId: null,
    firstSeq: 0,
    bodies: [],
    hashes: [],
  };
  /**
   * The chain's tail as of this transaction generation: inside one write transaction only this
   * connection appends, so it saves a lookup per event; any rollback or new transaction
   * invalidates it.
   */
  private readonly cached = { generation: -1, seq: 0, hash: GENESIS_HASH };
  /** Events given to `appendDeferred`, validated and waiting for the next transaction, in order. */
  private deferred: AuditRecord[] = [];
  /** The deferred events written into the open transaction: queued again if it rolls back. */
  private inFlight: AuditRecord[] = [];
  /** The end-of-turn write of deferred events, when one is due. */
  private deferredTimer: NodeJS.Immediate | null = null;

  /** `schemaVersion`: the open file's; a read-only open of an older file reads its layout. */
  constructor(
    private readonly ctx: StoreContext,
    schemaVersion: number,
  ) {
    this.reader = auditReader(ctx.db, schemaVersion);
    this.insert = ctx.readonly
      ? null
      : ctx.db.prepare('INSERT INTO audit_log (seq, last_seq, run_id, body, hashes) VALUES (?, ?, ?, ?, ?)');
    if (!ctx.readonly) {
      ctx.tx.onFlush(
        () => this.flush(),
        () => this.discard(),
      );
      ctx.tx.onOuter(
        () => this.writeDeferred(),
        (committed) => {
          // Rolled back: the deferred events it held are written by the next transaction.
          if (!committed && this.inFlight.length > 0) {
            this.deferred = [...this.inFlight, ...this.deferred];
            this.scheduleDeferred();
          }
          this.inFlight = [];
        },
      );
    }
  }

  /**
   * Like `append` — validated and redacted now, errors thrown now — but written with this
   * connection's next transaction instead of a commit of its own: first in the next transaction
   * any store call opens, before any read of the log, before `store.sync()` / `syncNow()` and
   * `close()`, and at the end of this event-loop turn at the latest. Events keep their order on
   * the chain. For the steps of a run (`proposed`, `policy_decided`): they then commit with the
   * approval or the ledger's `started` row that follows them, and a process crash can lose only
   * the events of the current turn, whose steps re-run on restore (a lost step is audited again).
   * Inside an open transaction it is `append`.
   */
  appendDeferred(input: AuditEventInput): void {
    assertWritable(this.ctx, 'audit.append');
    const event = parseInput(AuditEventInput, input, 'audit.append', this.ctx.redactor, fastAuditEventInput);
    event.at ??= this.ctx.clock();
    if (this.ctx.tx.active) {
      this.ctx.tx.runStatement(() => this.write(event));
      return;
    }
    this.deferred.push(event);
    this.scheduleDeferred();
  }

  /**
   * Writes the deferred events now, in a transaction of their own. Inside an open transaction
   * there are none (a transaction this runner opens writes them first, and `appendDeferred`
   * inside one appends at once), except in one opened on the raw connection, whose end this log
   * does not see: they then wait for the next one.
   */
  flushDeferred(): void {
    if (this.deferred.length === 0 || this.insert === null || this.ctx.tx.active) return;
    this.ctx.tx.run(() => {});
  }

  private scheduleDeferred(): void {
    if (this.deferredTimer !== null) return;
    this.deferredTimer = setImmediate(() => {
      this.deferredTimer = null;
      if (this.ctx.db.open) this.flushDeferred();
    });
  }

  /** Inside the transaction being opened: the deferred events go first. */
  private writeDeferred(): void {
    if (this.deferred.length === 0) return;
    const events = this.deferred;
    this.deferred = [];
    this.inFlight.push(...events);
    for (const event of events) this.write(event);
  }

  /** Validates, redacts and appends one event in its own transaction (or the caller's). */
  append(input: AuditEventInput): AuditEvent {
    assertWritable(this.ctx, 'audit.append');
    // A fresh record in the one fixed shape (never the caller's object).
    const event = parseInput(AuditEventInput, input, 'audit.append', this.ctx.redactor, fastAuditEventInput);
    event.at ??= this.ctx.clock();
    return this.ctx.tx.runStatement(() => {
      const written = this.write(event);
      return eventOf(written.fields[1], written.fields, written.detail, written.prevHash, written.hash);
    });
  }

  /**
   * @internal Appends an already validated event inside the caller's open transaction, so it
   * commits or rolls back with the state change it describes. For the ledger, the Inbox and the
   * grant stores; everything else uses `append`. `event` comes from `newAuditRecord`.
   */
  record(event: AuditRecord): void {
    this.write(event);
  }

  /** Hashes `event` onto the chain and holds it for its row; returns what was hashed. */
  private write(event: AuditRecord): {
    fields: HashedFields;
    detail: unknown;
    prevHash: string;
    hash: string;
  } {
    if (!this.ctx.tx.active) {
      throw new StoreStateError(StateErrorCode.durabilityMismatch, 'audit.record needs an open transaction');
    }
    const insert = this.insert;
    if (insert === null) {
      throw new StoreStateError(
        StateErrorCode.readonlyStore,
        `audit.record: ${this.ctx.file} was opened read-only`,
      );
    }
    const detail = this.ctx.redactor.redact(event.detail ?? null);
    const generation = this.ctx.tx.generation;
    const cached = this.cached;
    if (cached.generation !== generation) {
      const last = this.reader.head();
      cached.generation = generation;
      cached.seq = last?.seq ?? 0;
      cached.hash = last?.hash ?? GENESIS_HASH;
    }
    const prevHash = cached.hash;
    // The fields in hash order (see chain.ts).
    const fields: HashedFields = [
      AUDIT_EVENT_VERSION,
      cached.seq + 1,
      event.at ?? this.ctx.clock(),
      event.kind,
      event.sessionId ?? null,
      event.agentId ?? null,
      event.surface ?? null,
      event.runId ?? null,
      event.callId ?? null,
      event.tool ?? null,
      event.risk ?? null,
      event.ruleId ?? null,
      toStoredText(this.ctx, event.resource),
      event.status ?? null,
      event.standingApprovalId ?? null,
      JSON.stringify(detail) ?? 'null',
    ];
    const body = eventBody(fields);
    const hash = hashBody(prevHash, body);
    const pending = this.pending;
    if (
      pending.bodies.length > 0 &&
      (pending.runId !== fields[7] || pending.bodies.length >= AUDIT_ROW_EVENTS)
    ) {
      this.flush();
    }
    if (pending.bodies.length === 0) {
      pending.runId = fields[7];
      pending.firstSeq = fields[1];
    }
    pending.bodies.push(body);
    pending.hashes.push(Buffer.from(hash, 'hex'));
    // Inside a transaction opened on the raw connection nobody would flush before its commit.
    if (!this.ctx.tx.owned) this.flush();
    cached.seq = fields[1];
    cached.hash = hash;
    return { fields, detail, prevHash, hash };
  }

  /** Writes the pending events as one row. */
  private flush(): void {
    const pending = this.pending;
    const count = pending.bodies.length;
    if (count === 0 || this.insert === null) return;
    // The row's JSON text, stored encoded (encoding.ts); decoding gives it back byte for byte.
    const body = encodeAuditBody(`[${pending.bodies.join(',')}]`, pending.runId);
    this.insert.run(
      pending.firstSeq,
      pending.firstSeq + count - 1,
      pending.runId,
      body,
      Buffer.concat(pending.hashes),
    );
    this.discard();
  }

  /** Forgets the pending events (their transaction or savepoint rolled back). */
  private discard(): void {
    this.pending.bodies = [];
    this.pending.hashes = [];
  }

  /** Makes this transaction's pending events readable. */
  private beforeRead(): void {
    this.flushDeferred();
    if (this.ctx.tx.active) this.ctx.tx.flush();
  }

  /** Events in seq order, optionally of one run, after a seq, limited. */
  list(query: AuditQuery = {}): AuditEvent[] {
    return [...this.iterate(query)];
  }

  /** Like `list`, streaming rows from the database instead of loading them all. */
  *iterate(query: AuditQuery = {}): Generator<AuditEvent> {
    this.beforeRead();
    yield* this.reader.events(query.runId, query.afterSeq ?? 0, query.limit ?? -1);
  }

  /**
   * Whether the log holds an event of run `runId` with call id `callId` and kind `kind`, events
   * of the open transaction included: the answer of `list({ runId }).some(...)` on those
   * fields, without building the run's events.
   */
  has(runId: string, callId: string, kind: string): boolean {
    this.beforeRead();
    return this.reader.has(runId, callId, kind);
  }

  /** The last event's seq and hash, or null for an empty log. */
  head(): { seq: number; hash: string } | null {
    this.beforeRead();
    return this.reader.head() ?? null;
  }

  /**
   * Walks the chain from the first event and names the first broken one. Given `from` (the
   * `headSeq` and `headHash` of an earlier successful verification), it verifies only the
   * events after it: incremental checks of a growing log.
   */
  verifyChain(from?: { readonly seq: number; readonly hash: string }): ChainVerification {
    this.beforeRead();
    if (from === undefined) return verifyRows(this.reader.chain(0));
    return verifyRows(this.reader.chain(from.seq), from);
  }
}
