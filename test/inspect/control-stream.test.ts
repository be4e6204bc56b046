import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import type { AgentContext } from '../../machines/agent/machine.ts';
import { ACTOR_STREAM_LAG_BYTES, MAX_ACTOR_STREAMS } from '../../runtime/control/actor-stream.ts';
import { watchActors } from '../../runtime/control/actor-watch.ts';
import { CONTROL_SOCKET, startControlSocket, type ControlMessage } from '../../runtime/control/socket.ts';
import { Inspector } from '../../runtime/inspect/index.ts';
import { until } from '../sidecar/client.ts';

let dir: string;
let control: { close(): Promise<void> } | null = null;
afterEach(async () => {
  await control?.close();
  control = null;
  rmSync(dir, { recursive: true, force: true });
});

/** An agent's root snapshot as XState inspection reports it (`n` live runs). */
function agentSnapshot(agentId: string, n: number): InspectionEvent {
  const context: AgentContext = {
    agentId,
    maxConcurrentRuns: 100_000,
    // Only the count is read.
    liveRuns: { length: n } as unknown as string[],
    started: n,
    refused: 0,
  };
  return {
    type: '@xstate.snapshot',
    rootId: 'x:0',
    actorRef: { sessionId: 'x:0' },
    snapshot: { status: 'active', value: 'ready', context },
    event: { type: 'MESSAGE' },
  } as unknown as InspectionEvent;
}

async function setup() {
  dir = mkdtempSync(join(tmpdir(), 'snotra-control-'));
  const inspector = new Inspector();
  inspector.onAgentInspection(agentSnapshot('worker', 0));
  const messages: ControlMessage[] = [];
  control = await startControlSocket(dir, (m) => messages.push(m), {
    actors: { snapshot: () => inspector.snapshot(), on: (l) => inspector.on(l) },
  });
  return { inspector, messages };
}

/** A raw connection that asks for the stream and collects what it is sent. */
function rawStream(): { socket: Socket; text: () => string; closed: () => boolean } {
  const socket = createConnection(join(dir, CONTROL_SOCKET));
  let text = '';
  let closed = false;
  socket.on('data', (d) => (text += String(d)));
  socket.on('close', () => (closed = true));
  socket.on('error', () => {});
  socket.write('{"v":1,"type":"inspect"}\n');
  return { socket, text: () => text, closed: () => closed };
}

describe('the actor stream on the control socket', () => {
  it('sends the tree, then each change; notifications on other connections still work', async () => {
    const { inspector, messages } = await setup();
    const lines: { type: string; seq?: number }[] = [];
    const watch = await watchActors(dir, (l) => lines.push(l));
    await until(() => lines.length === 1, 10_000, 'the tree');
    expect(lines[0]).toMatchObject({ type: 'actors', seq: 1, actors: [{ id: 'worker', kind: 'agent' }] });
    inspector.onAgentInspection(agentSnapshot('worker', 1));
    await until(() => lines.length === 2, 10_000, 'the change');
    expect(lines[1]).toMatchObject({ type: 'actor.state', seq: 2, actor: { id: 'worker', parentId: null } });
    const other = createConnection(join(dir, CONTROL_SOCKET));
    other.write('{"v":1,"type":"approval_decided","id":"apr-1"}\n');
    await until(() => messages.length === 1, 10_000, 'the notification');
    other.destroy();
    expect(messages).toEqual([{ v: 1, type: 'approval_decided', id: 'apr-1' }]);
    // The runtime stopping ends every stream with a last `stopped` line.
    await control?.close();
    control = null;
    expect(await watch.ended).toBe('stopped');
    expect(lines.at(-1)).toEqual({ type: 'stopped' });
  });

  it(`at most ${MAX_ACTOR_STREAMS} streams: one more is told too_many_streams and closed`, async () => {
    await setup();
    const open = Array.from({ length: MAX_ACTOR_STREAMS }, () => rawStream());
    try {
      await until(() => open.every((s) => s.text().includes('"type":"actors"')), 10_000, 'every stream open');
      const extra = rawStream();
      await until(() => extra.closed(), 10_000, 'the extra stream closed');
      expect(JSON.parse(extra.text())).toMatchObject({ type: 'error', error: { code: 'too_many_streams' } });
    } finally {
      for (const s of open) s.socket.destroy();
    }
  });

  it('a reader that stops reading gets one client_lagging line and is closed; the others keep receiving', async () => {
    const { inspector } = await setup();
    const stuck = rawStream();
    const lines: { type: string }[] = [];
    await watchActors(dir, (l) => lines.push(l));
    await until(() => stuck.text().includes('"type":"actors"') && lines.length > 0, 10_000, 'both open');
    stuck.socket.pause();
    // Publish four times the bound (each change is ~200 bytes), letting the event loop turn.
    const total = Math.ceil((ACTOR_STREAM_LAG_BYTES * 4) / 200);
    let n = 0;
    while (n < total) {
      for (let i = 0; i < 500; i += 1) inspector.onAgentInspection(agentSnapshot('worker', ++n));
      await new Promise((r) => setImmediate(r));
    }
    stuck.socket.resume();
    await until(() => stuck.closed(), 20_000, 'the stuck reader closed');
    const sent = stuck.text().trimEnd().split('\n');
    expect(sent.filter((l) => l.includes('client_lagging'))).toHaveLength(1);
    expect(JSON.parse(sent.at(-1) as string)).toMatchObject({
      type: 'error',
      error: { code: 'client_lagging' },
    });
    expect(sent.length).toBeLessThan(n);
    // The reading client got every change.
    await until(() => lines.length === n + 1, 20_000, 'every change at the reading client');
  }, 60_000);
});
