/**
 * Child process for the group-commit crash test: C concurrent writers each create an approval
 * (and a durable `beginCall` of its call) in a `durable: 'deferred'` transaction, then await
 * `store.sync()` and only then report it on stdout (`d <approval id> <idempotency key>`), the
 * way the runtime reports a run parked only once its approval is durable. Runs until killed.
 * Usage: node --import tsx test/store/group-sync-writer.ts <db> <concurrency>
 */
import { Redactor, openStore } from '../../store/index.ts';

const [path, cArg] = process.argv.slice(2);
if (path === undefined) {
  process.stderr.write('usage: group-sync-writer <db> <concurrency>\n');
  process.exit(2);
}
const store = openStore({ path, redactor: new Redactor() });
process.stdout.write('ready\n');
const prefix = `p${process.pid}`;
let next = 0;

async function writer(): Promise<never> {
  for (;;) {
    const n = next++;
    const now = Date.now();
    const id = `${prefix}-appr-${n}`;
    const key = `${prefix}-idem-${n}`;
    store.transaction(
      () => {
        store.approvals.create({
          id,
          callId: `${prefix}-call-${n}`,
          runId: `${prefix}-run-${n}`,
          sessionId: 's-1',
          taskId: 't-1',
          agentId: 'assistant',
          surface: 'scheduled',
          tool: 'send_message',
          args: { channel: '#ops', n },
          risk: 'external',
          reason: 'mode_ask',
          ruleId: 'mode.ask',
          idempotencyKey: key,
          resumeCheckpoint: { runId: `${prefix}-run-${n}` },
          createdAt: now,
          expiresAt: now + 60_000,
        });
        store.ledger.beginCall(
          {
            idempotencyKey: key,
            callId: `${prefix}-call-${n}`,
            runId: `${prefix}-run-${n}`,
            sessionId: 's-1',
            agentId: 'assistant',
            surface: 'scheduled',
            tool: 'send_message',
            risk: 'external',
            ruleId: 'mode.ask',
            resource: '#ops',
          },
          { durable: true },
        );
      },
      { durable: 'deferred' },
    );
    await store.sync();
    process.stdout.write(`d ${id} ${key}\n`);
  }
}

await Promise.all(Array.from({ length: Number(cArg ?? 8) }, writer));
