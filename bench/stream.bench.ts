/**
 * First `model.delta` seen by a `snotra run --json` reader after the provider's first content
 * byte (issue 31's goal: ≤ 50 ms p50, with redaction on). Each sample spawns the compiled bin
 * (`bin/snotra.js`, dist/ built by `npm run build`) on a fresh state dir with an
 * OpenAI-compatible model pointed at a local HTTP server; the model's API key is a configured
 * secret (env backend), so the hold-back buffer holds back up to its length - 1. The server
 * writes the stream's head, waits 300 ms (the child is then idle, waiting), notes the time and
 * writes the first content chunk (longer than the hold-back, so part of it can be released at
 * once); the bench notes when the child's stdout brings the first `model.delta` line. Both
 * times are this process's clock. Run: `npx tsx bench/stream.bench.ts`; prints JSON (ms).
 *
 * Env: BENCH_SAMPLES (default 15).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { summarize } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 15);
const BIN = join(import.meta.dirname, '..', 'bin', 'snotra.js');
const KEY = 'sk-bench-Hq3Vn8Tc2Lw6Rb9Xk4Md7Pf1Gs5Jy0Za';

const chunk = (content: string): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const HEAD = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`;
const FIRST = chunk('The answer, written as it is thought through, starts here and goes on. ');
const REST = [
  chunk('And it ends here.'),
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
  `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } })}\n\n`,
  'data: [DONE]\n\n',
].join('');

async function main(): Promise<void> {
  let firstByteAt = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(HEAD);
      setTimeout(() => {
        firstByteAt = performance.now();
        res.write(FIRST);
        setTimeout(() => res.end(REST), 200);
      }, 300);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-bench-stream-')));
    try {
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
                baseUrl: `http://127.0.0.1:${port}/v1`,
                model: 'bench',
                apiKey: { secret: 'bench-key' },
              },
            },
          },
        }),
      );
      const child = spawn(
        process.execPath,
        [BIN, 'run', '--config', join(dir, 'snotra.config.json'), '--json', 'hello'],
        {
          cwd: join(dir, 'project'),
          env: { PATH: process.env.PATH, HOME: process.env.HOME, SNOTRA_SECRET_BENCH_KEY: KEY },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      let seenAt = 0;
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (seenAt === 0 && out.includes('"type":"model.delta"')) seenAt = performance.now();
      });
      child.stderr.resume();
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      if (code !== 0 || seenAt === 0)
        throw new Error(`sample ${i}: exit ${code}, stdout ${out.slice(0, 400)}`);
      if (out.includes(KEY)) throw new Error(`sample ${i}: the key reached stdout`);
      latencies.push(seenAt - firstByteAt);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  server.close();
  console.log(
    JSON.stringify(
      {
        samples: SAMPLES,
        cpus: cpus().length,
        loadavg: loadavg().map((l) => Math.round(l * 10) / 10),
        firstDeltaAfterFirstContentByteMs: summarize(latencies),
      },
      null,
      2,
    ),
  );
}

await main();
