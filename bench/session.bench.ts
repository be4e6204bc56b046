/**
 * A 50-turn session resumed after a restart (issue 31's goal: ≤ 100 ms before its first request
 * goes out). A real SQLite state dir holds SESSIONS sessions of TURNS turns each (a turn: a user
 * message, a `read_file` call, its ~2 kB result, the answer), written through the store as runs
 * append them. Each sample restarts the runtime (a real embedded nats-server) with an
 * OpenAI-compatible provider pointed at a local HTTP server, then times `submit` of a message in
 * one of those sessions until the server has received the model request's whole body (history
 * read, call ids renamed, system prompt built, context fitted, request sent). The runtime's own
 * start is timed beside it. Run: `npx tsx bench/session.bench.ts`; prints JSON (ms).
 *
 * Env: BENCH_SESSIONS (samples, default 15), BENCH_TURNS (default 50).
 */
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { parseConfig } from '../runtime/config/load.ts';
import { modelFromConfig } from '../runtime/config/adapters/models.ts';
import { Runtime } from '../runtime/runtime.ts';
import { openStore, Redactor } from '../store/index.ts';
import { summarize } from './stats.ts';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 15);
const TURNS = Number(process.env.BENCH_TURNS ?? 50);

const FINAL = [
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: null }] })}\n\n`,
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
  'data: [DONE]\n\n',
].join('');

async function main(): Promise<void> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-bench-session-')));
  mkdirSync(join(dir, 'project'));
  let arrived: ((bytes: number) => void) | null = null;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrived?.(Buffer.concat(chunks).length);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(FINAL);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const loaded = parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: {
        assistant: {
          mode: 'allow',
          tools: ['read_file', 'list_dir'],
          instructions: 'Be brief.',
          model: { provider: 'openai-compatible', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'bench' },
        },
      },
    }),
    join(dir, 'snotra.config.json'),
    dir,
  );
  const quiet = new Writable({ write: (_c, _e, cb) => cb() });

  // The sessions, written once (a runtime start creates and migrates the database first).
  const first = await Runtime.start({ loaded, model: modelFromConfig(loaded), logDestination: quiet });
  await first.stop();
  const store = openStore({ path: join(dir, 'state', 'snotra.db'), redactor: new Redactor() });
  const result = 'x'.repeat(2000);
  for (let s = 0; s < SESSIONS; s++) {
    const id = `bench-${s}`;
    for (let t = 0; t < TURNS; t++) {
      const runId = `assistant:${id}-${t}`;
      store.sessions.claim(id, runId, {
        agentId: 'assistant',
        workspace: join(dir, 'project'),
        surface: 'cli',
      });
      store.sessions.appendRun({
        sessionId: id,
        runId,
        status: 'completed',
        entries: [
          { role: 'user', text: `question ${t}: ${'please look at the file and tell me '.repeat(5)}` },
          {
            role: 'assistant',
            calls: [{ id: 'c00000000', tool: 'read_file', args: { path: `src/f${t}.ts` } }],
          },
          {
            role: 'observation',
            observation: { kind: 'tool.result', callId: 'c00000000', tool: 'read_file', content: result },
          },
          { role: 'assistant', text: `answer ${t}: ${'the file defines a function that '.repeat(8)}` },
        ],
      });
    }
  }
  store.close();

  const startMs: number[] = [];
  const firstRequestMs: number[] = [];
  let bodyBytes = 0;
  for (let s = 0; s < SESSIONS; s++) {
    const t0 = performance.now();
    const rt = await Runtime.start({ loaded, model: modelFromConfig(loaded), logDestination: quiet });
    const t1 = performance.now();
    const got = new Promise<number>((resolve) => (arrived = resolve));
    const sent = performance.now();
    const runId = await rt.runs.submit('assistant', 'and the next file?', { sessionId: `bench-${s}` });
    bodyBytes = await got;
    firstRequestMs.push(performance.now() - sent);
    startMs.push(t1 - t0);
    await rt.waitForRun(runId);
    await rt.stop();
  }
  server.close();
  rmSync(dir, { recursive: true, force: true });
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const fmt = (v: ReturnType<typeof summarize>) =>
    Object.fromEntries(Object.entries(v).map(([k, n]) => [k, round(n)]));
  process.stdout.write(
    `${JSON.stringify(
      {
        turns: TURNS,
        samples: SESSIONS,
        requestBodyBytes: bodyBytes,
        submitToFirstRequestMs: fmt(summarize(firstRequestMs)),
        runtimeStartMs: fmt(summarize(startMs)),
        machine: { cpus: cpus().length, loadavg: loadavg().map(round) },
      },
      null,
      2,
    )}\n`,
  );
}

await main();
