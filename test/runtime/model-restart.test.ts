import { spawn } from 'node:child_process';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, Redactor } from '../../store/index.ts';
import { FakeModelServer, fixture, type SeenRequest } from '../model/fake-server.ts';
import { withDecodedRows } from '../support/stored-bytes.ts';
import { childNodeArgs } from '../support/child-scripts.ts';

const CHILD = new URL('../model/provider-child.ts', import.meta.url).pathname;
const KEY = 'sk-ant-api03-Hq4Wn8Zr2Kt6Vb0Xc3Md7Lf1Pj5Gs9Ya';

let server: FakeModelServer | null = null;
let dir: string | null = null;
afterEach(async () => {
  await server?.close();
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  server = null;
  dir = null;
});

function stepOf(req: SeenRequest): number {
  return ((req.body.messages ?? []) as { role: string }[]).filter((m) => m.role === 'assistant').length;
}

/** Runs the child to its end (or its SIGKILL); returns how it exited and what it printed. */
function life(
  d: string,
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...childNodeArgs(CHILD), d], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SNOTRA_SECRET_MODEL_KEY: KEY },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    child.stderr.on('data', (c) => (stderr += String(c)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`runtime child did not finish:\n${stdout}\n${stderr}`));
    }, 90_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

function allBytes(root: string): Buffer {
  const parts: Buffer[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else parts.push(readFileSync(p));
    }
  };
  walk(root);
  return Buffer.concat(parts);
}

describe.each([
  {
    provider: 'openai-compatible',
    fixtures: 'openai',
    keyHeader: 'authorization',
    keyValue: `Bearer ${KEY}`,
  },
  { provider: 'anthropic', fixtures: 'anthropic', keyHeader: 'x-api-key', keyValue: KEY },
])('restart during a run with the $provider provider', (p) => {
  it('SIGKILL after the model proposed a call and before it ran: the step is not asked again, the call runs once', async () => {
    server = await FakeModelServer.start();
    const srv = server;
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-model-restart-')));
    writeFileSync(join(dir, 'notes.txt'), 'the password hint is tangerine\n');
    writeFileSync(
      join(dir, 'snotra.config.json'),
      JSON.stringify({
        stateDir: 'state',
        workspace: { roots: [{ id: 'w', path: '.', access: 'read-write' }] },
        secrets: { backend: 'env' },
        agents: {
          assistant: {
            mode: 'allow',
            tools: ['read_file'],
            model: {
              provider: p.provider,
              baseUrl: `${srv.url}/v1`,
              model: 'test-model',
              apiKey: { secret: 'model-key' },
            },
          },
        },
      }),
    );
    srv.route = (req) =>
      stepOf(req) === 0
        ? { sse: fixture(`${p.fixtures}/read-file.sse`) }
        : { sse: fixture(`${p.fixtures}/final.sse`, { TEXT: 'tangerine' }) };

    const first = await life(dir);
    expect(first.signal).toBe('SIGKILL');
    expect(readFileSync(join(dir, 'killed.txt'), 'utf8')).toMatch(/^call:assistant:.+:c00000000\n$/);
    expect(srv.requests.map(stepOf)).toEqual([0]);

    const second = await life(dir);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('done completed final_answer "The file says: tangerine"');
    // The answered step 0 was never asked again; only step 1 (with the observation) followed.
    expect(srv.requests.map(stepOf)).toEqual([0, 1]);
    expect(JSON.stringify(srv.requests[1]?.body)).toContain('tangerine');
    // The call ran exactly once, under the key of the first life's proposal.
    const runId = readFileSync(join(dir, 'run-id.txt'), 'utf8');
    expect(readFileSync(join(dir, 'executions.txt'), 'utf8')).toBe(`call:${runId}:c00000000\n`);
    const store = openStore({
      path: join(dir, 'state', 'snotra.db'),
      redactor: new Redactor(),
      readonly: true,
    });
    try {
      expect(store.ledger.lookup(`call:${runId}:c00000000`)?.status).toBe('completed');
      expect(store.audit.list({ runId }).filter((e) => e.kind === 'proposed')).toHaveLength(1);
    } finally {
      store.close();
    }
    // The key went in its header, and nowhere else: not the state dir, not stdout or stderr (logs).
    for (const req of srv.requests) {
      expect(req.headers[p.keyHeader]).toBe(p.keyValue);
      expect(req.raw).not.toContain(KEY);
    }
    // Decoded too: snapshots and audit rows are stored encoded (test/support/stored-bytes.ts).
    expect(withDecodedRows(allBytes(join(dir, 'state'))).includes(KEY)).toBe(false);
    for (const out of [first.stdout, first.stderr, second.stdout, second.stderr])
      expect(out).not.toContain(KEY);
  }, 180_000);
});
