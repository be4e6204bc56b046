import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import type { RunFeedEvent } from '../../runtime/events.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import { DEFAULT_CENSOR } from '../../store/index.ts';
import { FakeModelServer } from '../model/fake-server.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { withDecodedRows } from '../support/stored-bytes.ts';

/** The model's API key: a configured secret, registered with the redactor when resolved. */
const KEY = 'sk-proj-Hq3Vn8Tc2Lw6Rb9Xk4Md7Pf1Gs5Jy0Za';
const LEAD = 'Here is the key you asked for, as the vault has it: ';
const TAIL = ' and that is all.';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
let server: FakeModelServer | null = null;
afterEach(async () => {
  await rt?.stop();
  await server?.close();
  fx?.cleanup();
  rt = null;
  server = null;
  fx = null;
});

/** Every byte under `dir` (database, WAL, bus store), decoded rows included. */
function allBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else parts.push(readFileSync(p));
    }
  };
  walk(dir);
  return withDecodedRows(Buffer.concat(parts));
}

/** `KEY` cut into `n` pieces of nearly equal size. */
function pieces(n: number): string[] {
  const size = Math.ceil(KEY.length / n);
  const out: string[] = [];
  for (let i = 0; i < KEY.length; i += size) out.push(KEY.slice(i, i + size));
  return out;
}

const openai = (texts: readonly string[]): string[] => [
  ...texts.map(
    (t) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t }, finish_reason: null }] })}\n\n`,
  ),
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
  `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 } })}\n\n`,
  'data: [DONE]\n\n',
];

const anthropicEvent = (type: string, data: Record<string, unknown>): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const anthropic = (texts: readonly string[]): string[] => [
  ...texts.map((text) =>
    anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
  ),
  anthropicEvent('content_block_stop', { index: 0 }),
  anthropicEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 30 } }),
  anthropicEvent('message_stop', {}),
];
const anthropicHead = [
  anthropicEvent('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      usage: { input_tokens: 12, output_tokens: 1 },
    },
  }),
  anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
];

const PROVIDERS = [
  { provider: 'openai-compatible', head: [] as string[], body: openai },
  { provider: 'anthropic', head: anthropicHead, body: anthropic },
] as const;

describe.each(PROVIDERS)('$provider: streamed text through the hold-back buffer', (p) => {
  it.each([2, 3, 4, 5])(
    'a configured secret split across %i deltas never appears in the feed, the logs or the store; deltas come before the turn ends',
    async (n) => {
      server = await FakeModelServer.start();
      fx = runtimeFixture({
        agents: {
          assistant: {
            mode: 'ask',
            tools: ['read_file'],
            model: {
              provider: p.provider,
              baseUrl: `${server.url}/v1`,
              model: 'm',
              apiKey: { secret: 'model-key' },
            },
          },
        },
      });
      const events: RunFeedEvent[] = [];
      let open: () => void = () => {};
      const gate = new Promise<void>((resolve) => (open = resolve));
      // The lead goes out first; the rest (the secret's pieces, the end) waits for the first delta.
      const sse = [...p.head, ...p.body([LEAD, ...pieces(n), TAIL])];
      const leadChunks = p.head.length + 1;
      server.route = () => ({ sse, gate: { after: leadChunks, open: gate } });
      rt = await fx.start(modelFromConfig(fx.loaded, { retryBaseMs: 10 }), {
        secretStore: new MemorySecretStore({ 'model-key': KEY }),
        onRunEvent: (e) => events.push(e),
      });
      const chat = rt.chat('assistant', 'what is the key?');
      await eventually(
        () => events.some((e) => e.type === 'model.delta'),
        20_000,
        'a delta before the turn ends',
      );
      // The turn is still open: nothing after the lead was sent, no model.text, the run still going.
      expect(events.map((e) => e.type)).toEqual(['run.started', 'model.delta']);
      open();
      const { outcome } = await chat;
      expect(outcome.status).toBe('completed');

      const types = events.map((e) => e.type);
      expect(types[0]).toBe('run.started');
      expect(types.slice(-3)).toEqual(['model.text', 'model.usage', 'run.completed']);
      const deltas = events.flatMap((e) => (e.type === 'model.delta' ? [e.delta] : []));
      expect(deltas.length).toBeGreaterThanOrEqual(2);
      const text = events.find((e) => e.type === 'model.text');
      expect(deltas.join('')).toBe(text?.type === 'model.text' ? text.delta : null);
      expect(deltas.join('')).toBe(`${LEAD}${DEFAULT_CENSOR}${TAIL}`);
      // Not the key, nor its head or tail, in any event or run of deltas.
      const fed = JSON.stringify(events) + deltas.join('');
      for (const needle of [KEY, KEY.slice(0, 12), KEY.slice(-12)]) expect(fed).not.toContain(needle);

      await rt.stop();
      rt = null;
      expect(allBytes(fx.stateDir).includes(KEY)).toBe(false);
      expect(fx.logs.join('')).not.toContain(KEY);
    },
  );
});
