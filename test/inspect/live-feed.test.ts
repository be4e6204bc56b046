import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActorStreamLine } from '../../runtime/control/actor-stream.ts';
import { LocalTree } from '../../surfaces/cli/inspect/render.ts';
import { call, until } from '../sidecar/client.ts';
import { BIN } from '../support/snotra-process.ts';
import {
  actorEvents,
  approvalTimes,
  parkedApprovals,
  startParkScenario,
  untilParked,
  type ParkScenario,
} from './park-scenario.ts';

const PARKS = 8;

/** `snotra inspect --json` as a real child: its lines parsed as they come. */
function inspectJson(configPath: string) {
  const child = spawn(process.execPath, [BIN, 'inspect', '--json', '--config', configPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TZ: 'UTC' },
  });
  const lines: ActorStreamLine[] = [];
  let out = '';
  let err = '';
  let rest = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    out += d;
    rest += d;
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(rest.slice(0, nl)) as ActorStreamLine);
      rest = rest.slice(nl + 1);
    }
  });
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return { child, lines, exited, stdout: () => out, stderr: () => err };
}

function treeOf(lines: readonly ActorStreamLine[]) {
  const local = new LocalTree();
  for (const l of lines) {
    if (l.type === 'actors') local.reset(l);
    else if (l.type === 'actor.created' || l.type === 'actor.state' || l.type === 'actor.stopped')
      local.apply(l);
  }
  return local.tree();
}

let s: ParkScenario;
let inspector: ReturnType<typeof inspectJson>;

beforeAll(async () => {
  s = await startParkScenario({ parks: PARKS, schedule: { kind: 'every-second' } });
  inspector = inspectJson(s.configPath);
  await until(() => inspector.lines.length > 0, 30_000, 'the first line of snotra inspect');
}, 120_000);

afterAll(async () => {
  inspector?.child.kill('SIGKILL');
  await s?.stop();
});

describe('the live actor tree through the real snotra start', () => {
  it('the events stream delivers actor.* changes that show each parked run with its approval; GET /v1/actors agrees', async () => {
    // The first tree: the agent, nothing parked yet.
    expect(s.initial.actors.map((a) => [a.id, a.kind, a.machine, a.state])).toEqual([
      ['worker', 'agent', 'agent', 'ready'],
    ]);
    const arrivals = await untilParked(s, PARKS, 90_000);
    const created = await approvalTimes(s);
    expect([...arrivals.keys()].sort()).toEqual([...created.keys()].sort());
    // Each change arrives after the approval row was written (same machine clock).
    for (const [id, at] of arrivals) expect(at).toBeGreaterThanOrEqual(created.get(id) as number);
    const events = actorEvents(s.frames).map((e) => e.event);
    expect(events.every((e, i) => i === 0 || e.seq > (events[i - 1]?.seq ?? 0))).toBe(true);
    for (const e of events)
      expect(Object.keys(e).sort()).toEqual(expect.arrayContaining(['actor', 'seq', 'type']));

    const { tree } = await s.actors();
    const worker = tree.actors.find((a) => a.id === 'worker');
    expect(worker?.children).toHaveLength(PARKS);
    const parked = parkedApprovals(tree);
    expect([...parked.keys()].sort()).toEqual([...created.keys()].sort());
    for (const { run, approval } of parked.values()) {
      expect(run).toMatchObject({
        kind: 'run',
        machine: 'run',
        state: 'waiting_for_approval',
        status: 'waiting_for_approval',
        parked: true,
        agentId: 'worker',
        budgets: { modelCalls: { used: 1, limit: 50 }, toolCalls: { used: 0, limit: 100 } },
      });
      expect(run.children).toEqual([approval]);
      expect(approval).toEqual({
        id: approval.id,
        kind: 'approval',
        machine: 'approval',
        state: 'requested',
        parked: true,
        status: 'pending',
        agentId: 'worker',
        runId: run.id,
        tool: 'write_file',
        children: [],
      });
    }
  }, 120_000);

  it('snotra inspect --json sees the same parked runs and approvals', async () => {
    const created = await approvalTimes(s);
    const seen = await until(
      () => {
        const p = parkedApprovals(treeOf(inspector.lines));
        return p.size === created.size ? p : undefined;
      },
      30_000,
      'the parked runs in snotra inspect',
    );
    expect([...seen.keys()].sort()).toEqual([...created.keys()].sort());
    expect(inspector.lines[0]).toMatchObject({ type: 'actors' });
    expect(inspector.lines.slice(1).every((l) => l.type.startsWith('actor.'))).toBe(true);
  }, 60_000);

  it('no argument value or secret in the tree, the actor.* events or snotra inspect', async () => {
    const { text } = await s.actors();
    const actorFrames = s.frames.filter((f) => f.event.startsWith('actor.')).map((f) => f.data);
    expect(actorFrames.length).toBeGreaterThan(0);
    for (const shown of [text, ...actorFrames, inspector.stdout()]) {
      expect(shown).not.toContain(s.secret);
      expect(shown).not.toContain('key=');
      expect(shown).not.toContain('report.txt');
      expect(shown).not.toContain('write the report');
    }
    // The benign look-alike: the same call's arguments do reach the Inbox (the human decides on them).
    const inbox = await call(s.port, 'GET', '/v1/inbox', { headers: s.auth });
    expect(inbox.text).toContain('report.txt');
  });

  it('snotra inspect ends with 0 on SIGINT', async () => {
    inspector.child.kill('SIGINT');
    expect(await inspector.exited).toBe(0);
    expect(inspector.stderr()).toBe('');
  }, 30_000);
});
