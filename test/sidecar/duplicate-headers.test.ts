import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { configDir } from './client.ts';

const TOKEN = randomBytes(32).toString('base64url');

let dir: string;
let snotra: StartedProcess;
let port: number;

beforeAll(async () => {
  dir = configDir(
    { agents: { chatter: { mode: 'ask', model: { provider: 'scripted', script: 'chatter.json' } } } },
    {
      chatter: [],
    },
  );
  snotra = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SIDECAR_TOKEN: TOKEN,
  });
  const ready = await snotra.ready(30_000);
  port = Number(new URL(ready.sidecar as string).port);
}, 60_000);

afterAll(async () => {
  if (snotra !== undefined) await stopProcess(snotra);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Sends one request exactly as written (header lines in order, duplicates kept); the answer's status and body. */
function raw(lines: readonly string[], path = '/v1/inbox'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: m === null ? 0 : Number(m[1]), text });
    });
    socket.end(`GET ${path} HTTP/1.1\r\n${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n`);
  });
}

describe('sidecar: a duplicate Host or Authorization header line gets 400 (counted in rawHeaders)', () => {
  const host = () => `Host: 127.0.0.1:${port}`;
  const auth = `Authorization: Bearer ${TOKEN}`;

  it('two Host lines, right and wrong in either order, or twice the same, are refused (also on /health)', async () => {
    const cases: string[][] = [
      [host(), 'Host: evil.test', auth],
      ['Host: evil.test', host(), auth],
      [host(), host(), auth],
      [host(), `host: localhost:${port}`, auth],
      [auth, host(), `HOST: 127.0.0.1:${port}`],
    ];
    for (const lines of cases) {
      for (const path of ['/v1/inbox', '/health']) {
        const a = await raw(lines, path);
        expect(a.status, `${path} ${JSON.stringify(lines)}`).toBe(400);
        expect(a.text).toContain('duplicate_header');
        expect(a.text).not.toContain(TOKEN);
      }
    }
  });

  it('two Authorization lines, right and wrong in either order, or twice the right one, are refused', async () => {
    for (const lines of [
      [host(), auth, 'Authorization: Bearer wrong'],
      [host(), 'Authorization: Bearer wrong', auth],
      [host(), auth, auth],
      [host(), auth, `authorization: Bearer ${TOKEN}`],
      [host(), 'Authorization: Basic x', auth],
    ]) {
      const a = await raw(lines);
      expect(a.status, JSON.stringify(lines)).toBe(400);
      expect(a.text).toContain('duplicate_header');
    }
  });

  it('a WebSocket upgrade with two Host or two Authorization lines is refused with 400', async () => {
    const ws = [
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Version: 13',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      `Sec-WebSocket-Protocol: snotra.v1, snotra.token.${TOKEN}`,
    ];
    for (const extra of [['Host: evil.test'], [auth, auth]]) {
      const a = await raw([host(), ...extra, ...ws], '/v1/ws');
      expect(a.status, JSON.stringify(extra)).toBe(400);
    }
  });

  it('look-alikes pass: one Host and one Authorization in any case, beside Proxy-Authorization and X-Forwarded-Host', async () => {
    for (const lines of [
      [host(), auth],
      [`hOsT: 127.0.0.1:${port}`, `AUTHORIZATION: Bearer ${TOKEN}`],
      [host(), 'X-Forwarded-Host: evil.test', 'Proxy-Authorization: Bearer x', auth],
      [auth, `Host: localhost:${port}`],
    ]) {
      expect((await raw(lines)).status, JSON.stringify(lines)).toBe(200);
    }
    expect((await raw([host()], '/health')).status).toBe(200);
    // One wrong Host stays 403 and a missing token 401, as before.
    expect((await raw(['Host: evil.test', auth])).status).toBe(403);
    expect((await raw([host()])).status).toBe(401);
  });
});
