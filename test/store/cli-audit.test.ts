import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditKind, DB_FILE_NAME } from '../../store/index.ts';
import type { Store } from '../../store/index.ts';
import { resolveConfig } from '../../runtime/config/load.ts';
import { auditCommand } from '../../surfaces/cli/audit.ts';
import { callInput, openTemp, tempDir } from './helpers.ts';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await auditCommand(argv, { stdout: (s) => void (out += s), stderr: (s) => void (err += s) });
  return { code, out, err };
}

function seed(store: Store): void {
  store.audit.append({ kind: AuditKind.proposed, runId: 'run-1', callId: 'call-1', tool: 'write_file' });
  store.ledger.beginCall(callInput(1));
  store.ledger.completeCall('idem-1', { ok: true });
  store.audit.append({
    kind: AuditKind.proposed,
    runId: 'run-2',
    callId: 'call-9',
    tool: 'shell',
    resource: 'evil\u001b[2Jpath',
  });
}

describe('snotra audit', () => {
  it('prints one JSON line per event of a run with --json', async () => {
    const { store, path } = openTemp();
    seed(store);
    const { code, out } = await run(['--db', path, '--run', 'run-1', '--json']);
    expect(code).toBe(0);
    const events = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; runId: string });
    expect(events.map((e) => e.kind)).toEqual(['proposed', 'started', 'completed']);
    expect(events.every((e) => e.runId === 'run-1')).toBe(true);
  });

  it('prints readable lines with control characters escaped', async () => {
    const { store, path } = openTemp();
    seed(store);
    const { code, out } = await run([`--db=${path}`]);
    expect(code).toBe(0);
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(
      /^\d{4}-\d\d-\d\dT.*Z #2 started run=run-1 call=call-1 .*tool=write_file risk=write-local/,
    );
    expect(out).not.toContain('\u001b');
    expect(lines[3]).toContain('resource=evil\\u001b[2Jpath');
  });

  it('finds the database in a state directory', async () => {
    const dir = tempDir();
    const { store } = openTemp({ path: join(dir, DB_FILE_NAME) });
    seed(store);
    const { code, out } = await run(['--state-dir', dir, '--verify']);
    expect(code).toBe(0);
    expect(out).toBe('audit chain ok: 4 events verified\n');
  });

  it('exits 1 and names the first broken event when the chain is broken', async () => {
    const { store, path } = openTemp();
    seed(store);
    const db = store.connection;
    db.exec('DROP TRIGGER audit_log_no_update');
    db.prepare(
      `UPDATE audit_log SET body = replace(body, '"write_file"', '"read_file"') WHERE seq = 3`,
    ).run();
    const readable = await run(['--db', path, '--verify']);
    expect(readable.code).toBe(1);
    expect(readable.out).toMatch(/BROKEN at event #3 \(hash_mismatch\)/);
    const json = await run(['--db', path, '--verify', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out.trim())).toMatchObject({
      verify: { ok: false, brokenSeq: 3, reason: 'hash_mismatch' },
    });
    const withRun = await run(['--db', path, '--verify', '--json', '--run', 'run-2']);
    expect(withRun.code).toBe(1);
    expect(withRun.out.trim().split('\n')).toHaveLength(2);
  });

  it.each([
    [['--bogus'], /unknown argument "--bogus"/],
    [['--run'], /--run needs a value/],
    [['--db', 'a', '--state-dir', 'b'], /exclusive/],
    [['--config', 'a', '--db', 'b'], /exclusive/],
    [['--json=yes'], /takes no value/],
  ])('exits 2 on usage error %j', async (argv, message) => {
    const { code, err } = await run(argv);
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(err).toContain('usage: snotra audit');
  });

  it('defaults to the state dir of the folder’s config (or the embedded defaults, outside the folder)', async () => {
    const dir = tempDir();
    const { store } = openTemp({ path: join(resolveConfig(undefined, dir).config.stateDir, DB_FILE_NAME) });
    seed(store);
    let out = '';
    const code = await auditCommand(
      ['--run', 'run-2'],
      { stdout: (s) => void (out += s), stderr: () => {} },
      dir,
    );
    expect(code).toBe(0);
    expect(out).toContain('call=call-9');
  });

  it('exits 1 (as runs and inbox do) naming the file when there is no database', async () => {
    const missing = join(tempDir(), 'nothing', 'snotra.db');
    const { code, err } = await run(['--db', missing]);
    expect(code).toBe(1);
    expect(err).toContain(missing);
  });

  it('prints usage with --help', async () => {
    expect(await run(['--help'])).toMatchObject({
      code: 0,
      out: expect.stringContaining('usage: snotra audit'),
    });
  });
});
