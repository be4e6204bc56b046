import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { withDecodedRows } from '../support/stored-bytes.ts';
import { call, configDir, until } from './client.ts';

// A token the test launcher hands over (like `snotra app` will); 256 random bits.
const TOKEN = randomBytes(32).toString('base64url');
// A secret of the runtime's env store, which the scripted model repeats in its answer (as if it
// had read it from a file), and a credential shape no store knows.
const SECRET = `sk-demo-${randomBytes(16).toString('hex')}`;
const SHAPE_PASSWORD = `pw-${randomBytes(8).toString('hex')}`;
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const ALLOWED = 'http://127.0.0.1:1'; // configured in sidecar.allowedOrigins

let dir: string;
let snotra: StartedProcess;
let port: number;

beforeAll(async () => {
  const fireAt = new Date(Date.now() + 3000).toISOString().replace(/\.\d+Z$/, '');
  dir = configDir(
    {
      agents: {
        worker: { mode: 'ask', model: { provider: 'scripted', script: 'worker.json' } },
        chatter: { mode: 'ask', model: { provider: 'scripted', script: 'chatter.json' } },
        leaker: { mode: 'ask', model: { provider: 'scripted', script: 'leaker.json' } },
        envdump: { mode: 'allow', model: { provider: 'scripted', script: 'envdump.json' } },
      },
      secrets: { backend: 'env' },
      surfaces: {
        scheduled: [
          { id: 'nightly', agent: 'worker', cron: fireAt, message: 'write the notes', missed: 'run-once' },
        ],
      },
      sidecar: {
        allowedOrigins: [ALLOWED],
        limits: { bodyBytes: 4096, frameBytes: 4096, connections: 3, requestsPerMinute: 100_000 },
      },
    },
    {
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'notes.txt', content: 'hello' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'written' } },
      ],
      chatter: [{ respond: { kind: 'final', text: 'hello from chatter' } }],
      leaker: [
        {
          respond: {
            kind: 'final',
            text: `the key is ${SECRET} and the login is password=${SHAPE_PASSWORD}`,
          },
        },
      ],
      // A tool child (the sandboxed shell) writes down the environment it was given.
      envdump: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'e1', tool: 'shell', args: { command: 'env > child-env.txt' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'shell' }, respond: { kind: 'final', text: 'dumped' } },
      ],
    },
  );
  // No transform cache: the TypeScript loader's esbuild child is started on every boot (and checked below).
  snotra = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SIDECAR_TOKEN: TOKEN,
    TSX_DISABLE_CACHE: '1',
    SNOTRA_SECRET_DEMO_KEY: SECRET,
    // The most verbose logs are searched for the token too.
    SNOTRA_LOG_LEVEL: 'debug',
  });
  const ready = await snotra.ready(30_000);
  const url = ready.sidecar as string;
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  port = Number(new URL(url).port);
  // The two slow clients start now and are judged near the end of the file: their deadlines
  // (10 s, 30 s) run out while the other tests run, not one after the other.
  headersCut = slowClient(
    `GET /v1/inbox HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n`,
  );
  bodyCut = slowClient(
    `POST /v1/chat/chatter/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text":',
    // A slow drip keeps the connection busy, so only the whole-request deadline can end it.
    ' ',
  );
}, 60_000);

/** How a slow client's connection ended: after how long, and what it was answered. */
interface SlowClientEnd {
  readonly afterMs: number;
  readonly answer: string;
}
let headersCut: Promise<SlowClientEnd>;
let bodyCut: Promise<SlowClientEnd>;

/**
 * Opens a connection to the sidecar, writes `head` and never finishes the request (writing `drip`
 * every 2 s when given); resolves when the sidecar closes the connection.
 */
function slowClient(head: string, drip?: string): Promise<SlowClientEnd> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let start = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d) => (answer += String(d)));
    socket.on('error', () => {});
    socket.once('connect', () => {
      start = Date.now();
      socket.write(head);
      if (drip !== undefined) timer = setInterval(() => socket.write(drip), 2000);
    });
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ afterMs: Date.now() - start, answer });
    });
  });
}

afterAll(async () => {
  if (snotra !== undefined) await stopProcess(snotra);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function errorOf(a: { json(): unknown }) {
  return (a.json() as { error: { code: string; message: string } }).error;
}

describe('sidecar through the real snotra start: authentication, Host, Origin, raw paths', () => {
  it('GET /health answers exactly {"ok":true} without a token, nosniff', async () => {
    const a = await call(port, 'GET', '/health');
    expect(a.status).toBe(200);
    expect(a.text).toBe('{"ok":true}');
    expect(a.headers['x-content-type-options']).toBe('nosniff');
    expect(a.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a missing, wrong, wrong-length, wrong-scheme or query/cookie token gets 401, never data', async () => {
    const cases: { path: string; headers: Record<string, string> }[] = [
      { path: '/v1/inbox', headers: {} },
      { path: '/v1/inbox', headers: { Authorization: `Bearer ${'x'.repeat(TOKEN.length)}` } },
      { path: '/v1/inbox', headers: { Authorization: `Bearer ${TOKEN}x` } },
      { path: '/v1/inbox', headers: { Authorization: `Bearer ${TOKEN.slice(0, -1)}` } },
      { path: '/v1/inbox', headers: { Authorization: `Basic ${TOKEN}` } },
      { path: '/v1/inbox', headers: { Authorization: `bearer ${TOKEN}` } },
      { path: '/v1/inbox', headers: { Authorization: `Bearer  ${TOKEN}` } },
      { path: `/v1/inbox?token=${TOKEN}`, headers: {} },
      { path: `/v1/inbox?access_token=${TOKEN}`, headers: {} },
      { path: '/v1/inbox', headers: { Cookie: `token=${TOKEN}` } },
      { path: '/v1/runs', headers: {} },
      { path: '/v1/events', headers: {} },
      { path: '/v1/machines/run', headers: {} },
      { path: '/v1/nothing-here', headers: {} }, // 404 only after auth
    ];
    for (const c of cases) {
      const a = await call(port, 'GET', c.path, { headers: c.headers });
      expect(a.status, `${c.path} ${JSON.stringify(Object.keys(c.headers))}`).toBe(401);
      expect(errorOf(a).code).toBe('unauthorized');
      expect(a.headers['x-content-type-options']).toBe('nosniff');
      expect(a.text).not.toContain(TOKEN);
    }
    // The benign look-alike: the right token works.
    expect((await call(port, 'GET', '/v1/inbox', { headers: AUTH })).status).toBe(200);
  });

  it('exempt /health is matched on the raw path: traversal, double slash, escapes and case are not exempt', async () => {
    for (const path of [
      '/health/../v1/inbox',
      '//v1/inbox',
      '/%2e%2e/v1/inbox',
      '/health/%2e%2e/v1/inbox',
      '/HEALTH',
      '/health/',
      '/health?x=1',
      '/./health',
      '//health',
      '/health%2f..%2fv1%2finbox',
    ]) {
      const a = await call(port, 'GET', path);
      expect(a.status, path).toBe(401);
      // With the token these raw paths are not normalized into a route either.
      const b = await call(port, 'GET', path, { headers: AUTH });
      expect(b.status, `${path} with token`).toBe(404);
      expect(errorOf(b).code).toBe('not_found');
    }
    expect((await call(port, 'POST', '/health')).status).toBe(401);
  });

  it('a Host other than 127.0.0.1:<port> or localhost:<port> gets 403, even with the token and on /health', async () => {
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `127.0.0.1:${port + 1}`,
      '127.0.0.1',
      `localhost.evil.example:${port}`,
      `[::1]:${port}`,
      `0.0.0.0:${port}`,
      `LOCALHOST:${port}x`,
    ]) {
      for (const path of ['/health', '/v1/inbox']) {
        const a = await call(port, 'GET', path, { headers: { ...AUTH, Host: host } });
        expect(a.status, `${host} ${path}`).toBe(403);
        expect(errorOf(a).code).toBe('bad_host');
        expect(a.text).not.toMatch(/evil|nip\.io|\[::1\]|0\.0\.0\.0|LOCALHOST/);
      }
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      expect((await call(port, 'GET', '/v1/inbox', { headers: { ...AUTH, Host: host } })).status).toBe(200);
    }
  });

  it('a present Origin must be the own origin, a Tauri one or configured; CORS names only those, never *', async () => {
    for (const origin of [
      'http://evil.example',
      `http://localhost:${port + 1}`,
      `http://127.0.0.1:${port}.evil.example`,
      'null',
      'http://127.0.0.1:10',
      'https://127.0.0.1:1',
      'tauri://localhost.evil.example',
    ]) {
      for (const method of ['GET', 'OPTIONS']) {
        const a = await call(port, method, '/v1/inbox', { headers: { ...AUTH, Origin: origin } });
        expect(a.status, `${method} ${origin}`).toBe(403);
        expect(errorOf(a).code).toBe('bad_origin');
        expect(a.headers['access-control-allow-origin']).toBeUndefined();
        expect(a.text).not.toContain(origin);
      }
    }
    for (const origin of [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      'tauri://localhost',
      'http://tauri.localhost',
      ALLOWED,
    ]) {
      const a = await call(port, 'GET', '/v1/inbox', { headers: { ...AUTH, Origin: origin } });
      expect(a.status, origin).toBe(200);
      expect(a.headers['access-control-allow-origin']).toBe(origin);
      expect(a.headers['access-control-allow-credentials']).toBeUndefined();
      expect(a.headers.vary).toBe('Origin');
      // Preflight needs no token and answers the same origin.
      const p = await call(port, 'OPTIONS', '/v1/inbox', {
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
      });
      expect(p.status).toBe(204);
      expect(p.headers['access-control-allow-origin']).toBe(origin);
      expect(String(p.headers['access-control-allow-headers'])).toMatch(/Authorization/);
      // An allowed origin still needs the token.
      expect((await call(port, 'GET', '/v1/inbox', { headers: { Origin: origin } })).status).toBe(401);
    }
    const noOrigin = await call(port, 'GET', '/v1/inbox', { headers: AUTH });
    expect(noOrigin.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('POST bodies: not application/json is 415, too large is 413, strict schemas give 400, unknown approval 404', async () => {
    const path = '/v1/inbox/nope/decision';
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
    ]) {
      const a = await call(port, 'POST', path, {
        headers: { ...AUTH, 'Content-Type': type },
        body: '{"decision":"approve"}',
      });
      expect(a.status, type).toBe(415);
      expect(errorOf(a).code).toBe('unsupported_media_type');
    }
    const none = await call(port, 'POST', path, { headers: AUTH, body: '{"decision":"approve"}' });
    expect(none.status).toBe(415);
    const big = await call(port, 'POST', path, {
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', reason: 'x'.repeat(5000) }),
    });
    expect(big.status).toBe(413);
    expect(errorOf(big).code).toBe('body_too_large');
    // Declared too large (Content-Length), refused before the body is read.
    const declared = await call(port, 'POST', path, {
      headers: { ...AUTH, 'Content-Type': 'application/json', 'Content-Length': '5000' },
      body: JSON.stringify({ decision: 'approve', reason: 'x'.repeat(4960) }).padEnd(5000, ' '),
    });
    expect(declared.status).toBe(413);
    expect(errorOf(declared).code).toBe('body_too_large');
    const json = { ...AUTH, 'Content-Type': 'application/json' };
    for (const body of [
      '{"decision":"approve","extra":1}',
      '{"decision":"yes"}',
      '{}',
      '[]',
      'not json',
      '{"decision":"deny","scope":"always"}',
    ]) {
      const a = await call(port, 'POST', path, { headers: json, body });
      expect(a.status, body).toBe(400);
      expect(a.text).not.toContain('Bearer');
    }
    const missing = await call(port, 'POST', path, { headers: json, body: '{"decision":"approve"}' });
    expect(missing.status).toBe(404);
    expect(errorOf(missing).code).toBe('not_found');
    const chatBad = await call(port, 'POST', '/v1/chat/chatter/messages', {
      headers: json,
      body: '{"text":"hi","model":"x"}',
    });
    expect(chatBad.status).toBe(400);
    const chatNobody = await call(port, 'POST', '/v1/chat/ghost/messages', {
      headers: json,
      body: '{"text":"hi"}',
    });
    expect(chatNobody.status).toBe(404);
    expect(errorOf(chatNobody).code).toBe('unknown_agent');
  });

  it('GET /v1/machines/:name is the graph; an unknown name is 404', async () => {
    const a = await call(port, 'GET', '/v1/machines/approval', { headers: AUTH });
    expect(a.status).toBe(200);
    expect(a.json()).toMatchObject({ machine: 'approval' });
    expect((await call(port, 'GET', '/v1/machines/__proto__', { headers: AUTH })).status).toBe(404);
  });
});

/** Reads an SSE stream until `until` holds for what arrived; returns the text and closes. */
function readSse(
  headers: Record<string, string>,
  enough: (text: string) => boolean,
  timeoutMs = 30_000,
  onOpen: () => void = () => {},
): Promise<{ status: number; text: string; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: '/v1/events', headers, agent: false }, (res) => {
      let text = '';
      const timer = setTimeout(() => {
        req.destroy();
        reject(new Error(`SSE condition not met; got:\n${text}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode ?? 0, text, res });
      };
      if (res.statusCode !== 200) {
        res.on('data', (d) => (text += String(d)));
        res.on('end', done);
        return;
      }
      res.on('data', (d) => {
        text += String(d);
        onOpen();
        if (enough(text)) done();
      });
      res.on('error', () => {});
    });
    req.on('error', () => {});
  });
}

describe('sidecar event streams', () => {
  it('SSE needs the token; events carry id: sequence numbers; Last-Event-ID replays; heartbeats arrive', async () => {
    const refused = await readSse({}, () => true);
    expect(refused.status).toBe(401);
    expect(refused.text).not.toContain('event:');

    let opened = false;
    const live = readSse(
      AUTH,
      (t) => t.includes('event: run.completed') && t.includes('hello from chatter'),
      30_000,
      () => (opened = true),
    );
    await until(() => opened, 10_000, 'the event stream open');
    const chatAnswer = await until(
      async () => {
        const a = await call(port, 'POST', '/v1/chat/chatter/messages', {
          headers: { ...AUTH, 'Content-Type': 'application/json' },
          body: '{"text":"hi there"}',
        });
        return a.status === 202 ? (a.json() as { runId: string }) : undefined;
      },
      10_000,
      'a chat accepted',
    );
    expect(chatAnswer.runId).toMatch(/^chatter:/);
    const { text } = await live;
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(text).toContain(`"runId":"${chatAnswer.runId}"`);
    expect(text).toContain('event: run.started');

    // Replay after the first id: the later ones come again, the first does not.
    const first = ids[0] as number;
    const last = ids[ids.length - 1] as number;
    const replay = await readSse({ ...AUTH, 'Last-Event-ID': String(first) }, (t) =>
      t.includes(`id: ${last}\n`),
    );
    expect(replay.text).not.toMatch(new RegExp(`^id: ${first}$`, 'm'));
    expect(replay.text).toContain(`id: ${first + 1}\n`);

    // A heartbeat comment keeps an idle stream alive (every 10 s).
    const idle = await readSse(AUTH, (t) => t.includes(': heartbeat'), 30_000);
    expect(idle.text).toContain(': heartbeat');

    // The run and its audit are readable through the API.
    const run = await until(
      async () => {
        const a = await call(port, 'GET', `/v1/runs/${encodeURIComponent(chatAnswer.runId)}`, {
          headers: AUTH,
        });
        const body = a.json() as { run?: { status: string } };
        return a.status === 200 && body.run?.status === 'completed' ? body : undefined;
      },
      10_000,
      'the chat run completed',
    );
    expect(run).toMatchObject({ run: { agentId: 'chatter', surface: 'sidecar' } });
    const audit = await call(port, 'GET', `/v1/runs/${encodeURIComponent(chatAnswer.runId)}/audit`, {
      headers: AUTH,
    });
    expect(audit.status).toBe(200);
    // A run that called no tool has no tool-call audit events; the list is there and empty.
    expect((audit.json() as { events: unknown[] }).events).toEqual([]);
    expect((await call(port, 'GET', '/v1/runs/nope:1', { headers: AUTH })).status).toBe(404);
  }, 90_000);

  function openWs(
    protocols: string[] | undefined,
    headers: Record<string, string> = {},
    path = '/v1/ws',
  ): Promise<{ ws: WebSocket | null; status: number | null; body: string }> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, protocols, { headers, maxPayload: 1 << 24 });
      ws.once('open', () => resolve({ ws, status: null, body: '' }));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d) => (body += String(d)));
        res.on('end', () => resolve({ ws: null, status: res.statusCode ?? 0, body }));
      });
      ws.once('error', () => resolve({ ws: null, status: -1, body: '' }));
    });
  }

  it('WebSocket: token, Host and Origin checked before the handshake; snotra.v1 answered; events and chat flow', async () => {
    const refusals: [string[] | undefined, Record<string, string>, string, number][] = [
      [undefined, {}, '/v1/ws', 401],
      [['snotra.v1'], {}, '/v1/ws', 401],
      [['snotra.v1', `snotra.token.${'y'.repeat(TOKEN.length)}`], {}, '/v1/ws', 401],
      [[`snotra.token.${TOKEN}`], {}, '/v1/ws', 401], // no snotra.v1
      [['snotra.v1', `snotra.token.${TOKEN}`], { Origin: 'http://evil.example' }, '/v1/ws', 403],
      [['snotra.v1', `snotra.token.${TOKEN}`], { Host: `evil.example:${port}` }, '/v1/ws', 403],
      [['snotra.v1'], {}, `/v1/ws?token=${TOKEN}`, 401],
      [['snotra.v1', `snotra.token.${TOKEN}`], {}, '/v1/ws/../v1/ws', 404],
    ];
    for (const [protocols, headers, path, status] of refusals) {
      const r = await openWs(protocols, headers, path);
      expect(r.ws, `${JSON.stringify(headers)} ${path}`).toBeNull();
      expect(r.status, `${JSON.stringify(headers)} ${path}`).toBe(status);
      expect(r.body).not.toContain(TOKEN);
    }
    const ok = await openWs(['snotra.v1', `snotra.token.${TOKEN}`], { Origin: `http://127.0.0.1:${port}` });
    const ws = ok.ws as WebSocket;
    expect(ws).not.toBeNull();
    expect(ws.protocol).toBe('snotra.v1');
    const messages: { type: string; runId?: string; event?: { type: string; runId: string } }[] = [];
    ws.on('message', (d) => messages.push(JSON.parse(String(d))));
    ws.send(JSON.stringify({ type: 'chat', agent: 'chatter', text: 'over the socket' }));
    const accepted = await until(
      () => messages.find((m) => m.type === 'chat.accepted'),
      10_000,
      'chat.accepted',
    );
    await until(
      () => messages.find((m) => m.event?.type === 'run.completed' && m.event.runId === accepted.runId),
      20_000,
      'the chat run over the socket',
    );
    ws.send('{"type":"chat","agent":"chatter","text":"x","extra":true}');
    await until(() => messages.find((m) => m.type === 'error'), 10_000, 'an error for a bad message');
    // A frame over sidecar.limits.frameBytes closes the connection with 1009.
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send('x'.repeat(5000));
    expect(await closed).toBe(1009);
  }, 60_000);

  it('everything leaving the sidecar is redacted: a secret the model repeats reaches no stream and no route', async () => {
    const ws = (await openWs(['snotra.v1', `snotra.token.${TOKEN}`])).ws as WebSocket;
    expect(ws).not.toBeNull();
    const wsText: string[] = [];
    ws.on('message', (d) => wsText.push(String(d)));
    let opened = false;
    const completedLeaker = (t: string) =>
      t.split('\n').some((l) => l.includes('"type":"run.completed"') && l.includes('"agentId":"leaker"'));
    const live = readSse(AUTH, completedLeaker, 30_000, () => (opened = true));
    await until(() => opened, 10_000, 'the event stream open');
    const posted = await call(port, 'POST', '/v1/chat/leaker/messages', {
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: '{"text":"what is the key?"}',
    });
    expect(posted.status).toBe(202);
    const { runId } = posted.json() as { runId: string };
    const { text } = await live;
    await until(() => completedLeaker(wsText.join('\n')), 20_000, 'the run on the WebSocket');
    ws.close();
    const run = await call(port, 'GET', `/v1/runs/${encodeURIComponent(runId)}`, { headers: AUTH });
    const audit = await call(port, 'GET', `/v1/runs/${encodeURIComponent(runId)}/audit`, { headers: AUTH });
    const runs = await call(port, 'GET', '/v1/runs', { headers: AUTH });
    const outputs = { sse: text, ws: wsText.join('\n'), run: run.text, audit: audit.text, runs: runs.text };
    // The answer did go out (redacted), so an empty stream cannot pass.
    expect(outputs.sse).toContain('the key is [REDACTED]');
    expect(outputs.ws).toContain('the key is [REDACTED]');
    expect(outputs.run).toContain('the key is [REDACTED]');
    for (const [where, out] of Object.entries(outputs)) {
      expect(out, where).not.toContain(SECRET);
      expect(out, where).not.toContain(SHAPE_PASSWORD);
    }
  }, 60_000);

  it('at most `connections` event streams at once (429); /health still answers; a closed one frees its slot', async () => {
    const sockets: WebSocket[] = [];
    try {
      await until(
        async () => {
          const r = await openWs(['snotra.v1', `snotra.token.${TOKEN}`]);
          if (r.ws !== null) {
            sockets.push(r.ws);
            return undefined;
          }
          return r.status === 429 ? r : undefined;
        },
        20_000,
        'the connection cap',
      );
      expect(sockets.length).toBeLessThanOrEqual(3);
      const sse = await readSse(AUTH, () => true);
      expect(sse.status).toBe(429);
      expect(JSON.parse(sse.text)).toMatchObject({ error: { code: 'too_many_connections' } });
      expect((await call(port, 'GET', '/health')).status).toBe(200);
    } finally {
      for (const s of sockets) s.close();
    }
    await until(
      async () => {
        const r = await openWs(['snotra.v1', `snotra.token.${TOKEN}`]);
        r.ws?.close();
        return r.ws !== null;
      },
      10_000,
      'a slot again',
    );
  }, 60_000);
});

describe('an unattended run parks and a decision through the sidecar resumes it once', () => {
  it('POST /v1/inbox/:id/decision approves as sidecar:<user>; a second decision is 409 already_decided', async () => {
    const pending = await until(
      async () => {
        const a = await call(port, 'GET', '/v1/inbox', { headers: AUTH });
        const list = (a.json() as { approvals: { id: string; tool: string; taskId: string }[] }).approvals;
        return list.find((x) => x.taskId === 'nightly');
      },
      30_000,
      'the parked approval in the inbox',
    );
    expect(pending.tool).toBe('write_file');
    expect(existsSync(join(dir, 'project', 'notes.txt'))).toBe(false);
    const json = { ...AUTH, 'Content-Type': 'application/json' };
    // A standing approval is only for external tools with a target: refused, nothing decided.
    const always = await call(port, 'POST', `/v1/inbox/${pending.id}/decision`, {
      headers: json,
      body: '{"decision":"approve","scope":"always"}',
    });
    expect(always.status).toBe(400);
    expect(errorOf(always).code).toBe('grant_not_eligible');
    const ok = await call(port, 'POST', `/v1/inbox/${pending.id}/decision`, {
      headers: json,
      body: '{"decision":"approve"}',
    });
    expect(ok.status).toBe(200);
    expect(ok.json()).toMatchObject({ approval: { id: pending.id, status: 'approved' } });
    expect((ok.json() as { approval: { decidedBy: string } }).approval.decidedBy).toMatch(/^sidecar:./);
    await until(() => existsSync(join(dir, 'project', 'notes.txt')), 20_000, 'the approved write');
    expect(readFileSync(join(dir, 'project', 'notes.txt'), 'utf8')).toBe('hello');
    const again = await call(port, 'POST', `/v1/inbox/${pending.id}/decision`, {
      headers: json,
      body: '{"decision":"deny","reason":"changed my mind"}',
    });
    expect(again.status).toBe(409);
    expect(errorOf(again).code).toBe('already_decided');
    const runs = await until(
      async () => {
        const list = (
          (await call(port, 'GET', '/v1/runs', { headers: AUTH })).json() as {
            runs: { runId: string; status: string; surface: string }[];
          }
        ).runs.filter((r) => r.surface === 'scheduled');
        return list.length === 1 && list[0]?.status === 'completed' ? list : undefined;
      },
      20_000,
      'one completed scheduled run',
    );
    const audit = (
      await call(port, 'GET', `/v1/runs/${encodeURIComponent(runs[0]!.runId)}/audit`, { headers: AUTH })
    ).json() as {
      events: { kind: string; tool?: string }[];
    };
    // Resumed once: the write started once and completed once.
    const writes = audit.events.filter((e) => e.tool === 'write_file').map((e) => e.kind);
    expect(writes.filter((k) => k === 'started')).toHaveLength(1);
    expect(writes.filter((k) => k === 'completed')).toHaveLength(1);
    expect(audit.events.some((e) => e.kind === 'approval_resolved')).toBe(true);
  }, 90_000);
});

function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d), ...descendants(Number(d)));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

function filesUnder(root: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(root)) {
    const p = join(root, name);
    const s = statSync(p, { throwIfNoEntry: false });
    if (s === undefined) continue;
    if (s.isDirectory()) out.push(...filesUnder(p));
    else if (s.isFile()) out.push(p);
  }
  return out;
}

describe('slow clients are cut off (started at boot, judged here)', () => {
  it('a client that never finishes its headers is cut off after the headers timeout (10 s)', async () => {
    const { afterMs, answer } = await headersCut;
    expect(afterMs).toBeGreaterThanOrEqual(9000);
    expect(afterMs).toBeLessThan(25_000);
    expect(answer).not.toContain('approvals');
  }, 40_000);

  it('a client that sends its headers but never finishes its body is cut off after the request timeout (30 s)', async () => {
    const { afterMs, answer } = await bodyCut;
    expect(afterMs).toBeGreaterThanOrEqual(29_000);
    expect(afterMs).toBeLessThan(50_000);
    expect(answer).not.toContain('runId');
    expect(answer).not.toContain(TOKEN);
  }, 70_000);
});

describe('the token stays secret', () => {
  it('a tool child (the sandboxed shell of an allow-mode chat) is not given the token or the secret', async () => {
    const posted = await call(port, 'POST', '/v1/chat/envdump/messages', {
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: '{"text":"dump your environment"}',
    });
    expect(posted.status).toBe(202);
    const { runId } = posted.json() as { runId: string };
    const run = await until(
      async () => {
        const a = await call(port, 'GET', `/v1/runs/${encodeURIComponent(runId)}`, { headers: AUTH });
        const body = a.json() as { run?: { status: string } };
        return a.status === 200 && body.run?.status !== 'running' ? body : undefined;
      },
      30_000,
      'the envdump run ended',
    );
    expect(run.run?.status).toBe('completed');
    const childEnv = readFileSync(join(dir, 'project', 'child-env.txt'), 'utf8');
    // The child's environment was written (PATH is on every child's allowlist)…
    expect(childEnv).toMatch(/^PATH=/m);
    // …and holds neither the token, nor its variable, nor the store's secret.
    expect(childEnv).not.toContain(TOKEN);
    expect(childEnv).not.toContain('SNOTRA_SIDECAR_TOKEN');
    expect(childEnv).not.toContain(SECRET);
    expect(childEnv).not.toContain('SNOTRA_SECRET_');
  }, 60_000);

  it('is absent from every other process cmdline/environ (the children included), the state dir, stdout and stderr', () => {
    const children = descendants(snotra.pid);
    const names = children.map((c) => readFileSync(`/proc/${c}/comm`, 'utf8').trim());
    // nats-server (and, when the bin runs the sources, the esbuild service tsx starts at boot:
    // test/cli/bin-token.test.ts checks that one).
    expect(names).toEqual(expect.arrayContaining(['nats-server']));
    let scanned = 0;
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d) || Number(d) === snotra.pid) continue;
      for (const f of ['cmdline', 'environ']) {
        try {
          expect(
            readFileSync(`/proc/${d}/${f}`).includes(TOKEN),
            `/proc/${d}/${f} (${readFileSync(`/proc/${d}/comm`, 'utf8').trim()})`,
          ).toBe(false);
          scanned += 1;
        } catch (err) {
          // Another user's process, or one that ended meanwhile.
          if (!['EACCES', 'ENOENT', 'ESRCH', 'EPERM'].includes(String((err as { code?: string }).code)))
            throw err;
        }
      }
    }
    for (const c of children) {
      expect(readFileSync(`/proc/${c}/environ`).includes(TOKEN)).toBe(false);
      expect(readFileSync(`/proc/${c}/environ`).includes('SNOTRA_SIDECAR_TOKEN')).toBe(false);
    }
    expect(scanned).toBeGreaterThan(children.length);
    const files = filesUnder(join(dir, 'state'));
    expect(files.some((f) => f.endsWith('snotra.db'))).toBe(true);
    // Compressed snapshots and audit fragments are decoded too: the raw bytes alone would let a
    // stored token pass.
    for (const f of files) {
      expect(withDecodedRows(readFileSync(f)).includes(TOKEN), f).toBe(false);
      expect(withDecodedRows(readFileSync(f)).includes(SECRET), f).toBe(false);
    }
    // The logs (debug level, on stderr) were written and hold neither.
    expect(snotra.stderr()).toContain('"msg":"run completed"');
    // A client cut off mid-body (the request timeout above) is its failure, not logged as the runtime's.
    expect(snotra.stderr()).not.toContain('sidecar request failed');
    expect(snotra.stdout()).not.toContain(TOKEN);
    expect(snotra.stderr()).not.toContain(TOKEN);
    expect(snotra.stderr()).not.toContain(SECRET);
  });
});
