import { randomBytes } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ActorEvent, ActorNode, ActorTreeSnapshot } from '../../runtime/inspect/index.ts';
import { LocalTree } from '../../surfaces/cli/inspect/render.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { call, configDir, until } from '../sidecar/client.ts';
import { FakeModelServer } from '../model/fake-server.ts';

/** One SSE frame as it arrived, with the test process's wall clock at its arrival. */
export interface Frame {
  readonly id: number;
  readonly event: string;
  readonly data: string;
  readonly at: number;
}

/** A `snotra start` whose scheduled tasks each start one unattended run that parks on a write. */
export interface ParkScenario {
  readonly dir: string;
  readonly configPath: string;
  readonly snotra: StartedProcess;
  readonly port: number;
  readonly auth: Record<string, string>;
  /** A configured secret (env secret store) that every parked call carries in its arguments. */
  readonly secret: string;
  readonly parks: number;
  /** Every SSE frame of `GET /v1/events` since before the first task fired. */
  readonly frames: Frame[];
  /** The tree `GET /v1/actors` answered when the stream had opened. */
  readonly initial: ActorTreeSnapshot;
  actors(): Promise<{ text: string; tree: ActorTreeSnapshot }>;
  stop(): Promise<void>;
}

/** Opens `GET /v1/events` and records each frame; resolves once the stream is open. */
export function openEvents(
  port: number,
  auth: Record<string, string>,
  frames: Frame[],
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/events',
        headers: { Host: `127.0.0.1:${port}`, ...auth },
        agent: false,
      },
      (res) => {
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          const at = Date.now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const raw = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const f: Record<string, string> = {};
            for (const line of raw.split('\n')) {
              const m = /^(id|event|data): (.*)$/.exec(line);
              if (m !== null) f[m[1] as string] = m[2] as string;
            }
            if (f.data !== undefined)
              frames.push({ id: Number(f.id), event: f.event ?? '', data: f.data, at });
          }
        });
        res.on('error', () => {});
        resolve(res);
      },
    );
    req.on('error', reject);
  });
}

/** When the scenario's tasks fire. */
export type ParkSchedule =
  /** Every task on every second: each parks at its first firing (later ones are skipped while it waits). */
  | { readonly kind: 'every-second' }
  /** One-shot tasks, `perSecond` of them on each second from `firstInMs` after the config is written. */
  | { readonly kind: 'spread'; readonly perSecond: number; readonly firstInMs: number };

/**
 * Starts `snotra start` with `parks` scheduled tasks, an agent in ask mode whose model writes a
 * file (approval required: unattended, so each run parks in the Inbox), and an env secret that
 * the write's content carries. The events stream is open before the first run parks
 * (`every-second`: the model holds its answers until then; `spread`: the scripted model, and the
 * start is rejected when the runtime was not ready before the first task, since a one-shot task
 * already past at boot is skipped).
 */
export async function startParkScenario(options: {
  parks: number;
  schedule: ParkSchedule;
}): Promise<ParkScenario> {
  return startOnce(options);
}

/** The OpenAI-compatible stream of one `write_file` call (the agent's only answer). */
function writeCallStream(content: string): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-park',
      object: 'chat.completion.chunk',
      created: 1764547200,
      model: 'park-model',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  return [
    chunk(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { index: 0, id: 'call_park', type: 'function', function: { name: 'write_file', arguments: '' } },
        ],
      },
      null,
    ),
    chunk(
      {
        tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ path: 'report.txt', content }) } }],
      },
      null,
    ),
    chunk({}, 'tool_calls'),
    'data: [DONE]\n\n',
  ];
}

async function startOnce(options: { parks: number; schedule: ParkSchedule }): Promise<ParkScenario> {
  const secret = `sk-${randomBytes(18).toString('base64url')}`;
  const token = randomBytes(32).toString('base64url');
  const auth = { Authorization: `Bearer ${token}` };
  const schedule = options.schedule;
  const base = schedule.kind === 'spread' ? Date.now() + schedule.firstInMs : 0;
  const scheduled = Array.from({ length: options.parks }, (_, i) => ({
    id: `park-${i}`,
    agent: 'worker',
    cron:
      schedule.kind === 'spread'
        ? new Date(base + Math.floor(i / schedule.perSecond) * 1000).toISOString().replace(/\.\d+Z$/, '')
        : '* * * * * *',
    message: 'write the report',
    missed: 'run-once',
  }));
  // Every second: the tasks fire on the first whole second after the scheduler starts, which can
  // come before the stream opens (a loaded machine, a ready line late in its second). So their
  // model (a local OpenAI-compatible server) holds every answer until the stream is open and the
  // first tree read: each run may start before, but parks only after.
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  const server = schedule.kind === 'every-second' ? await FakeModelServer.start() : null;
  if (server !== null)
    server.route = () => ({ sse: writeCallStream(`key=${secret}`), gate: { after: 0, open: released } });
  const model =
    server === null
      ? { provider: 'scripted', script: 'worker.json' }
      : { provider: 'openai-compatible', baseUrl: `${server.url}/v1`, model: 'park-model' };
  const dir = configDir(
    {
      agents: { worker: { mode: 'ask', model } },
      secrets: { backend: 'env' },
      surfaces: { scheduled },
      sidecar: { limits: { requestsPerMinute: 100_000, connections: 8 } },
    },
    {
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'report.txt', content: `key=${secret}` } }],
          },
        },
      ],
    },
  );
  const configPath = join(dir, 'snotra.config.json');
  const snotra = startSnotra(['start', '--config', configPath], {
    SNOTRA_SIDECAR_TOKEN: token,
    SNOTRA_SECRET_DEPLOY_KEY: secret,
  });
  const stop = async () => {
    release();
    await stopProcess(snotra);
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ready = await snotra.ready(60_000);
    const port = Number(new URL(ready.sidecar as string).port);
    const frames: Frame[] = [];
    await openEvents(port, auth, frames);
    const actors = async () => {
      const a = await call(port, 'GET', '/v1/actors', { headers: auth });
      if (a.status !== 200) throw new Error(`GET /v1/actors answered ${a.status}`);
      return { text: a.text, tree: a.json() as ActorTreeSnapshot };
    };
    const initial = (await actors()).tree;
    release();
    if (schedule.kind === 'spread' && Date.now() >= base - 200)
      throw new Error(
        `snotra start was not ready ${schedule.firstInMs} ms after the config was written; raise firstInMs`,
      );
    return {
      dir,
      configPath,
      snotra,
      port,
      auth,
      secret,
      parks: options.parks,
      frames,
      initial,
      actors,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The `actor.*` events among the frames, with their arrival times. */
export function actorEvents(frames: readonly Frame[]): { event: ActorEvent; at: number }[] {
  return frames
    .filter((f) => f.event.startsWith('actor.'))
    .map((f) => ({ event: JSON.parse(f.data) as ActorEvent, at: f.at }));
}

/** Runs of a tree that are parked with a pending approval under them, by approval id. */
export function parkedApprovals(
  tree: ActorTreeSnapshot,
): Map<string, { run: ActorNode; approval: ActorNode }> {
  const found = new Map<string, { run: ActorNode; approval: ActorNode }>();
  const walk = (nodes: readonly ActorNode[]) => {
    for (const n of nodes) {
      if (n.kind === 'run' && n.parked && n.state === 'waiting_for_approval') {
        for (const c of n.children)
          if (c.kind === 'approval' && c.status === 'pending') found.set(c.id, { run: n, approval: c });
      }
      walk(n.children);
    }
  };
  walk(tree.actors);
  return found;
}

/**
 * Replays the `actor.*` events over the first tree: for each approval, when (test clock) the
 * applied tree first showed it pending under its parked run.
 */
export function parkArrivals(initial: ActorTreeSnapshot, frames: readonly Frame[]): Map<string, number> {
  const local = new LocalTree();
  local.reset(initial);
  const seen = new Map<string, number>();
  for (const { event, at } of actorEvents(frames)) {
    if (event.seq <= initial.seq) continue;
    local.apply(event);
    if (event.actor.kind !== 'run' && event.actor.kind !== 'approval') continue;
    for (const id of parkedApprovals(local.tree()).keys()) if (!seen.has(id)) seen.set(id, at);
  }
  return seen;
}

/** Waits until the events stream has shown `n` parked runs with their approval. */
export async function untilParked(
  s: ParkScenario,
  n: number,
  timeoutMs: number,
): Promise<Map<string, number>> {
  return until(
    () => {
      const arrivals = parkArrivals(s.initial, s.frames);
      return arrivals.size >= n ? arrivals : undefined;
    },
    timeoutMs,
    `${n} parked runs with their approvals on the events stream`,
  );
}

/** The approval rows (pending) as `GET /v1/inbox` shows them: id → createdAt (runtime clock). */
export async function approvalTimes(s: ParkScenario): Promise<Map<string, number>> {
  const a = await call(s.port, 'GET', '/v1/inbox', { headers: s.auth });
  const list = (a.json() as { approvals: { id: string; createdAt: number }[] }).approvals;
  return new Map(list.map((x) => [x.id, x.createdAt]));
}
