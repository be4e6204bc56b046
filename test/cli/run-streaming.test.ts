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
import { FakeModelServer } from '../model/fake-server.ts';
import { startSnotra } from '../support/snotra-process.ts';

/** The model's API key, a configured secret (env backend), which the model then writes out. */
const KEY = 'sk-stream-cli-8c3e1a9f5b7d2e4a6c0f';
const LEAD = 'Sure. The key in your vault, written out in full, is: ';
const dirs: string[] = [];
let server: FakeModelServer | null = null;
afterAll(async () => {
  await server?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const chunk = (content: string): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((p) => join(dir, p))
    .filter((p) => statSync(p).isFile());
}

describe('snotra run --json with a streaming provider', () => {
  it('writes model.delta lines before the turn ends; a secret split across 3 deltas is in no line, log or file', async () => {
    server = await FakeModelServer.start();
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const third = Math.ceil(KEY.length / 3);
    server.route = () => ({
      sse: [
        chunk(LEAD),
        chunk(KEY.slice(0, third)),
        chunk(KEY.slice(third, 2 * third)),
        chunk(KEY.slice(2 * third)),
        chunk('. Keep it safe.'),
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
        'data: [DONE]\n\n',
      ],
      gate: { after: 1, open: gate },
    });
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-run-stream-')));
    dirs.push(dir);
    mkdirSync(join(dir, 'project'));
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
              baseUrl: `${server.url}/v1`,
              model: 'test-model',
              apiKey: { secret: 'openai-key' },
            },
          },
        },
      }),
    );
    const p = startSnotra(['run', '--config', join(dir, 'snotra.config.json'), '--json', 'the key?'], {
      SNOTRA_SECRET_OPENAI_KEY: KEY,
    });
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 60_000);
    // The first delta line comes while the server still holds the rest of the answer.
    const deadline = Date.now() + 50_000;
    while (!p.stdout().includes('"type":"model.delta"') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(p.stdout()).toContain('"type":"model.delta"');
    expect(p.stdout()).not.toContain('"type":"model.text"');
    open();
    const code = await p.exited;
    clearTimeout(timer);
    expect(code, p.stderr()).toBe(0);
    const events = p
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; delta?: string });
    const deltas = events.filter((e) => e.type === 'model.delta').map((e) => e.delta);
    const text = events.find((e) => e.type === 'model.text')?.delta;
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.join('')).toBe(text);
    expect(text).toBe(`${LEAD}[REDACTED]. Keep it safe.`);
    for (const needle of [KEY, KEY.slice(0, 12), KEY.slice(-12)]) {
      expect(p.stdout()).not.toContain(needle);
      expect(p.stderr()).not.toContain(needle);
    }
    for (const f of filesUnder(join(dir, 'state'))) expect(readFileSync(f).includes(KEY), f).toBe(false);
  });
});
