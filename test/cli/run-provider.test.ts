import {
  mkdirSync,
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
import { afterAll, describe, expect, it } from 'vitest';
import { FakeModelServer, fixture, type SeenRequest } from '../model/fake-server.ts';
import { startSnotra } from '../support/snotra-process.ts';

const KEY = 'sk-run-cli-5b1f9c2e7d4a0b8c6e3f';
const dirs: string[] = [];
let server: FakeModelServer | null = null;
afterAll(async () => {
  await server?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const stepOf = (req: SeenRequest) =>
  ((req.body.messages ?? []) as { role: string }[]).filter((m) => m.role === 'assistant').length;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((p) => join(dir, p))
    .filter((p) => statSync(p).isFile());
}

describe('snotra run with a real provider', () => {
  it('resolves the API key from secrets.backend "env" at request time; it reaches only the Authorization header', async () => {
    server = await FakeModelServer.start();
    const s = server;
    s.route = (req) =>
      stepOf(req) === 0
        ? { sse: fixture('openai/read-file.sse') }
        : { sse: fixture('openai/final.sse', { TEXT: 'tangerine' }) };
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-run-provider-')));
    dirs.push(dir);
    mkdirSync(join(dir, 'project'));
    writeFileSync(join(dir, 'project', 'notes.txt'), 'the hint is tangerine\n');
    writeFileSync(
      join(dir, 'snotra.config.json'),
      JSON.stringify({
        stateDir: 'state',
        secrets: { backend: 'env' },
        workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
        agents: {
          assistant: {
            mode: 'ask',
            tools: ['read_file'],
            model: {
              provider: 'openai-compatible',
              baseUrl: `${s.url}/v1`,
              model: 'test-model',
              apiKey: { secret: 'openai-key' },
            },
          },
        },
      }),
    );
    const p = startSnotra(
      ['run', '--config', join(dir, 'snotra.config.json'), '--json', 'what does notes.txt say?'],
      {
        SNOTRA_SECRET_OPENAI_KEY: KEY,
      },
    );
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 60_000);
    const code = await p.exited;
    clearTimeout(timer);
    expect(code, p.stderr()).toBe(0);
    const events = p
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; text?: string });
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['run.started', 'tool.completed', 'run.completed']),
    );
    expect(events.find((e) => e.type === 'run.completed')?.text).toContain('tangerine');
    expect(s.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    // The key is nowhere else: not in the output, the logs or any file of the state dir.
    expect(p.stdout() + p.stderr()).not.toContain(KEY);
    for (const f of filesUnder(join(dir, 'state'))) expect(readFileSync(f).includes(KEY), f).toBe(false);
  }, 90_000);
});
