/**
 * Rewind through the real runtime and its OS sandbox (issue 38): a write and two shell calls each
 * take a checkpoint (the http_request between them takes none); a sandboxed command cannot list,
 * read, write or remove the checkpoint store; `snotra rewind --list` shows the run's checkpoints;
 * `snotra rewind CK --dry-run` shows the diff and changes nothing; `snotra rewind CK` puts back
 * the edits, deletions and renames of the shell call exactly, is audited `rewind`, lists the
 * http_request made since as not rewindable, and is undone through the checkpoint it took first.
 */
import { createServer, type Server } from 'node:http';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { openStore, Redactor } from '../../store/index.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { treeOf } from './support.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
let server: Server;
let port = 0;
let runId = '';
let initial: Record<string, string>;
let afterRun: Record<string, string>;

const call = (id: string, tool: string, args: unknown) => ({
  kind: 'calls' as const,
  calls: [{ id, tool, args }],
});
const json = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const cli = (argv: string[]) => runCliInProcess([...argv, '--state-dir', fx.stateDir], fx.dir);

beforeAll(async () => {
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  fx = runtimeFixture({
    agents: { assistant: { mode: 'allow' } },
    http: { allowPrivateHosts: [`127.0.0.1:${port}`] },
  });
  const p = fx.project;
  writeFileSync(join(p, 'a.txt'), 'one\ntwo\n');
  writeFileSync(join(p, 'b.txt'), 'delete me\n');
  writeFileSync(join(p, 'c.txt'), 'rename me\n', { mode: 0o644 });
  initial = treeOf(p);
  const S = `${fx.stateDir}/checkpoints`;
  const probe = [
    `R="${p}/report.txt"`,
    `: > "$R"`,
    `if ls -A "${S}" 2>/dev/null | grep -q .; then echo list=ok >> "$R"; else echo list=refused >> "$R"; fi`,
    `if cat "${S}"/records/*.json > /dev/null 2>&1; then echo read=ok >> "$R"; else echo read=refused >> "$R"; fi`,
    `if touch "${S}/pwned" 2>/dev/null; then echo write=ok >> "$R"; else echo write=refused >> "$R"; fi`,
    `rm -rf "${S}" 2>/dev/null`,
    `echo probe-done`,
  ].join('\n');
  const model = new ScriptedModel({
    assistant: [
      { respond: call('w1', 'write_file', { path: join(p, 'probe.sh'), content: probe }) },
      {
        expect: { kind: 'tool.result', tool: 'write_file' },
        respond: call('s1', 'shell', {
          command:
            'sed -i s/one/ONE/ a.txt && rm b.txt && mv c.txt d.txt && chmod 600 d.txt && echo new > e.txt',
          cwd: p,
        }),
      },
      {
        expect: { kind: 'tool.result', tool: 'shell' },
        respond: call('h1', 'http_request', {
          url: `http://127.0.0.1:${port}/hook`,
          method: 'POST',
          body: 'x',
        }),
      },
      {
        expect: { kind: 'tool.result', tool: 'http_request' },
        respond: call('s2', 'shell', { command: 'sh probe.sh', cwd: p }),
      },
      { expect: { kind: 'tool.result', contains: 'probe-done' }, respond: { kind: 'final', text: 'done' } },
    ],
  });
  rt = await fx.start(model);
  const result = await rt.chat('assistant', 'edit things');
  expect(result.outcome).toMatchObject({ status: 'completed', text: 'done' });
  runId = result.runId;
  await rt.stop();
  rt = null;
  afterRun = treeOf(fx.project);
});

afterAll(async () => {
  await rt?.stop();
  server?.close();
  fx?.cleanup();
});

describe('rewind through the real runtime', () => {
  it('a sandboxed command cannot list, read, write or remove the checkpoint store', () => {
    expect(readFileSync(join(fx.project, 'report.txt'), 'utf8')).toBe(
      'list=refused\nread=refused\nwrite=refused\n',
    );
    expect(readdirSync(join(fx.stateDir, 'checkpoints/records'))).toHaveLength(3);
  });

  it('lists one checkpoint per call that could change the root, none for the http_request', async () => {
    const r = await cli(['rewind', '--list', '--run', runId, '--json']);
    expect(r.code, r.err + r.out).toBe(0);
    const list = json(r.out);
    expect(list.map((c) => [c.tool, c.callId])).toEqual([
      ['write_file', 'w1'],
      ['shell', 's1'],
      ['shell', 's2'],
    ]);
    const text = await cli(['rewind', '--list']);
    expect(text.out).toContain(`run=${runId} call=s1`);
    expect(text.out).toMatch(/renamed +project:d\.txt -> c\.txt/);
  });

  it('a dry run shows the diff and changes nothing; the rewind is exact, audited, lists the request, and can be undone', async () => {
    const list = json((await cli(['rewind', '--list', '--run', runId, '--json'])).out);
    const first = String(list[0]?.id);
    const dry = await cli(['rewind', first, '--dry-run']);
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toContain('-ONE');
    expect(dry.out).toContain('+one');
    expect(dry.out).toMatch(/not rewindable[^\n]*\n {2}http_request -> http:\/\/127\.0\.0\.1:\d+\/hook at /);
    expect(treeOf(fx.project)).toEqual(afterRun);

    const done = await cli(['rewind', first, '--json']);
    expect(done.code, done.err).toBe(0);
    const report = json(done.out)[0] as {
      undo: string;
      changes: { path: string; change: string; from?: string }[];
      notRewindable: { tool: string; target: string }[];
    };
    expect(treeOf(fx.project)).toEqual(initial);
    expect(report.changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'a.txt', change: 'modified' }),
        expect.objectContaining({ path: 'b.txt', change: 'deleted' }),
        expect.objectContaining({ path: 'c.txt', change: 'renamed', from: 'd.txt' }),
        expect.objectContaining({ path: 'probe.sh', change: 'created' }),
      ]),
    );
    expect(report.notRewindable).toEqual([
      expect.objectContaining({ tool: 'http_request', target: `http://127.0.0.1:${port}/hook` }),
    ]);

    const store = openStore({
      path: join(fx.stateDir, 'snotra.db'),
      redactor: new Redactor(),
      readonly: true,
    });
    try {
      const events = store.audit.list().filter((e) => e.kind === 'rewind');
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ runId, callId: 'w1', surface: 'cli', status: 'restored' });
      expect(events[0]?.detail).toMatchObject({ checkpoint: first, undo: report.undo, notRewindable: 1 });
      expect(store.audit.verifyChain().ok).toBe(true);
    } finally {
      store.close();
    }

    const undo = await cli(['rewind', report.undo]);
    expect(undo.code, undo.err).toBe(0);
    expect(treeOf(fx.project)).toEqual(afterRun);
  });

  it('bad ids are clear errors naming the id, never a path read', async () => {
    const r = await cli(['rewind', '../../etc/passwd', '--json']);
    expect(r.code).toBe(1);
    expect(json(r.out)[0]).toMatchObject({ error: { code: 'invalid_checkpoint_id' } });
    const missing = await cli(['rewind', 'ck-00000000-00000000']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no checkpoint ck-00000000-00000000');
    const usage = await cli(['rewind', '--list', 'ck-00000000-00000000']);
    expect(usage.code).toBe(2);
  });
});
