/**
 * Child process for the cross-process decision test: waits until a shared start time, then
 * decides every given approval as fast as it can and prints one JSON line of results.
 * Usage: node --import tsx test/store/decide-worker.ts <db> <user> <startAtMs> <id>...
 */
import { Redactor, openStore } from '../../store/index.ts';

const [path, user, startAt, ...ids] = process.argv.slice(2);
if (path === undefined || user === undefined || startAt === undefined) {
  process.stderr.write('usage: decide-worker <db> <user> <startAtMs> <id>...\n');
  process.exit(2);
}
const store = openStore({ path, redactor: new Redactor(), busyTimeoutMs: 20_000 });
while (Date.now() < Number(startAt)) {
  // Spin so every worker starts deciding at the same moment.
}
const wins: string[] = [];
const reasons: Record<string, string> = {};
for (const id of ids) {
  const result = store.approvals.decide(id, user.length % 2 === 0 ? 'approved' : 'denied', user, Date.now());
  if (result.ok) wins.push(id);
  else reasons[id] = result.reason;
}
store.close();
process.stdout.write(`${JSON.stringify({ user, wins, reasons })}\n`);
