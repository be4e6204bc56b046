/**
 * Child process for the crash test: writes audited tool-call lifecycles (and now and then an
 * approval with its decision, and a run snapshot) in a loop until it is killed. After each
 * commit it prints `c <seq>`, the last committed audit seq, so the parent can prove that no
 * committed event was lost. Starts work when a line arrives on stdin (so the parent can start
 * the next writer ahead of time) and prints `ready` once the store is open.
 * Usage: node --import tsx test/store/crash-writer.ts <db>
 */
import { once } from 'node:events';
import { AuditKind, Redactor, openStore } from '../../store/index.ts';

const path = process.argv[2];
if (path === undefined) {
  process.stderr.write('usage: crash-writer <db>\n');
  process.exit(2);
}
await once(process.stdin, 'data');
const store = openStore({ path, redactor: new Redactor() });
const committed = (): void => void process.stdout.write(`c ${store.audit.head()?.seq ?? 0}\n`);
process.stdout.write('ready\n');

const prefix = `p${process.pid}`;
for (let i = 0; ; i++) {
  const callId = `${prefix}-call-${i}`;
  const key = `${prefix}-idem-${i}`;
  const ids = {
    runId: `${prefix}-run`,
    sessionId: 's-1',
    agentId: 'assistant',
    surface: 'chat',
    callId,
    tool: 'write_file',
  };
  store.transaction(() => {
    store.audit.append({
      ...ids,
      kind: AuditKind.proposed,
      detail: { args: { path: `f${i}.txt`, content: 'x'.repeat(i % 200) } },
    });
    store.audit.append({
      ...ids,
      kind: AuditKind.policyDecided,
      risk: 'write-local',
      ruleId: 'mode.allow',
      status: 'allow',
    });
    store.ledger.beginCall({ ...ids, idempotencyKey: key, risk: 'write-local', ruleId: 'mode.allow' });
  });
  committed();
  if (i % 7 === 3) store.ledger.failCall(key, new Error(`disk full at ${i}`));
  else store.ledger.completeCall(key, { bytes: i % 200 });
  committed();
  if (i % 25 === 0) {
    const now = Date.now();
    const approvalId = `${prefix}-appr-${i}`;
    store.approvals.create({
      id: approvalId,
      callId: `${callId}-approval`,
      sessionId: 's-1',
      agentId: 'assistant',
      tool: 'shell',
      args: { command: 'make deploy' },
      risk: 'exec',
      reason: 'mode_ask',
      ruleId: 'mode.ask',
      idempotencyKey: `${key}-approval`,
      expiresAt: now + 60_000,
    });
    committed();
    store.approvals.decide(approvalId, 'approved', 'alice', now);
    committed();
    store.snapshots.put({
      runId: `${prefix}-run`,
      agentId: 'assistant',
      surface: 'chat',
      status: 'running',
      snapshot: { status: 'active', value: 'modelStep', context: { step: i } },
    });
  }
}
