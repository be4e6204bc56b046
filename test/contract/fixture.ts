import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeModelServer } from '../model/fake-server.ts';
import type { ScenarioFolder } from './drivers/types.ts';

/** The configured secret of test 11 (env backend), a value no other code path knows. */
export const CONTRACT_SECRET = 'sk-contract-Qm7Zr4Xv9Lp2Tn8Wc5Hb1Ky6';
/** Its secret name. */
export const SECRET_NAME = 'api-token';

/**
 * A real loopback HTTP server that counts requests by path: the external side effect of
 * `http_request` calls (allowed for the runtime by `http.allowPrivateHosts`).
 */
export class HitServer {
  readonly #hits = new Map<string, number>();
  #server: Server | null = null;

  static async start(): Promise<HitServer> {
    const s = new HitServer();
    s.#server = createServer((req, res) => {
      const path = req.url ?? '';
      s.#hits.set(path, (s.#hits.get(path) ?? 0) + 1);
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    await new Promise<void>((r) => s.#server?.listen(0, '127.0.0.1', r));
    return s;
  }

  get hostPort(): string {
    return `127.0.0.1:${(this.#server?.address() as AddressInfo).port}`;
  }

  url(path: string): string {
    return `http://${this.hostPort}${path}`;
  }

  hits(path: string): number {
    return this.#hits.get(path) ?? 0;
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.#server?.closeAllConnections();
      this.#server?.close(() => r());
    });
  }
}

function sse(delta: Record<string, unknown>, finish: string): string[] {
  return [
    `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
    `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: finish }] })}\n\n`,
    'data: [DONE]\n\n',
  ];
}

/**
 * An OpenAI-compatible model server for test 11 that behaves like a compromised provider: it
 * echoes the API key it was sent into its tool call's arguments and its final answer, so the
 * secret reaches everything the runtime records about the run unless redaction holds.
 */
export async function leakyModelServer(): Promise<FakeModelServer> {
  const server = await FakeModelServer.start();
  server.route = (req) => {
    const auth = String(req.headers.authorization ?? '');
    const messages = (req.body.messages ?? []) as { role?: string }[];
    if (messages.some((m) => m.role === 'tool'))
      return { sse: sse({ content: `done; the key was ${auth}` }, 'stop') };
    return {
      sse: sse(
        {
          role: 'assistant',
          tool_calls: [
            {
              index: 0,
              id: 'call_leak',
              type: 'function',
              function: {
                name: 'write_file',
                arguments: JSON.stringify({ path: 'c11.txt', content: `authorization=${auth}` }),
              },
            },
          ],
        },
        'tool_calls',
      ),
    };
  };
  return server;
}

/** A group's files and servers: the folder its runtime works on, the hit counter, the leaky model. */
export interface GroupFixture {
  readonly folder: ScenarioFolder;
  readonly http: HitServer;
  readonly model: FakeModelServer;
  close(): Promise<void>;
}

/**
 * Creates a group's folder (`project/` with `readme.txt` and a symlink `escape` to `outside/`,
 * `docs/` with `guide.md`, `outside/`, the state dir's place) and starts its servers.
 */
export async function groupFixture(): Promise<GroupFixture> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-contract-')));
  const folder: ScenarioFolder = {
    dir,
    project: join(dir, 'project'),
    docs: join(dir, 'docs'),
    outside: join(dir, 'outside'),
    stateDir: join(dir, 'state'),
  };
  for (const d of [folder.project, folder.docs, folder.outside]) mkdirSync(d);
  writeFileSync(join(folder.project, 'readme.txt'), 'the project readme\n');
  writeFileSync(join(folder.docs, 'guide.md'), 'a guide\n');
  symlinkSync(folder.outside, join(folder.project, 'escape'));
  const http = await HitServer.start();
  const model = await leakyModelServer();
  return {
    folder,
    http,
    model,
    close: async () => {
      await http.close();
      await model.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
