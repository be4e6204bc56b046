/**
 * What an MCP server started by the real runtime can reach, seen from inside the server (the
 * hostile server's start-up probe, and `get-env` of `@modelcontextprotocol/server-everything`):
 * only the allowlisted environment plus its own configured variables; the runtime's state dir and
 * config hidden; no write outside the roots; no network unless `network: true` — and the benign
 * look-alikes (a write inside the read-write root, a connection with `network: true`) still work.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSIX_ENV_ALLOWLIST } from '../../runtime/processes/env.ts';
import { BIN, eventually, hostileServer, mcpFixture, ready, runOnce, script } from './support.ts';

const SECRET = 'sbx-secret-Tg5-mcp-probe';
const PARENT_ONLY = 'SNOTRA_TEST_MCP_PARENT_ONLY';
const PARENT_VALUE = 'parent-only-value-Lm3';

let listener: Server;
let port = 0;
beforeAll(async () => {
  // The parent's own variable: a child must never inherit it.
  process.env[PARENT_ONLY] = PARENT_VALUE;
  listener = createServer((s) => s.end());
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  port = (listener.address() as { port: number }).port;
});
afterAll(async () => {
  delete process.env[PARENT_ONLY];
  await new Promise<void>((r) => listener.close(() => r()));
});

/** Allowlisted, or `PWD`, which bubblewrap sets to the working directory it enters. */
function inheritedOk(name: string): boolean {
  return POSIX_ENV_ALLOWLIST.includes(name) || name.startsWith('LC_') || name === 'PWD';
}

describe('an MCP server in the OS sandbox', () => {
  it('sees only its own variables, not the state dir or config, cannot write outside the roots, has no network', async () => {
    const fx = mcpFixture((project) => {
      const dir = join(project, '..');
      const probe = (log: string, network: boolean) => {
        const base = hostileServer(project);
        const env = base.env as Record<string, unknown>;
        return {
          ...base,
          network,
          env: {
            ...env,
            HOSTILE_LOG: join(project, '.hostile', log),
            HOSTILE_PROBE: JSON.stringify({
              hidden: [join(dir, 'state'), join(dir, 'snotra.config.json')],
              write: [join(dir, `outside-${log}.txt`), join(project, `inside-${log}.txt`)],
              port,
            }),
          },
        };
      };
      return {
        agents: { a: { mode: 'ask' } },
        mcp: { servers: { h: probe('closed', false), open: probe('open', true) } },
      };
    }, SECRET);
    const lines = (log: string): string[] => {
      const file = join(fx.project, '.hostile', log);
      return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    };
    try {
      const rt = await fx.start({ a: [] });
      try {
        await ready(rt, 'h');
        await ready(rt, 'open');
        for (const log of ['closed', 'open']) {
          await eventually(() => lines(log).some((l) => l.startsWith('net ')), 30_000, `${log} probe done`);
        }
        // The state dir exists on the host (the store is open) and is empty or absent inside.
        expect(existsSync(join(fx.stateDir, 'snotra.db'))).toBe(true);
        for (const log of ['closed', 'open']) {
          const seen = lines(log);
          const env = JSON.parse(seen.find((l) => l.startsWith('env '))?.slice(4) ?? '[]') as string[];
          expect(env).toContain('HOSTILE_TOKEN');
          expect(env).not.toContain(PARENT_ONLY);
          expect(env).not.toContain('NODE_OPTIONS');
          expect(env.filter((n) => !n.startsWith('HOSTILE_') && !inheritedOk(n))).toEqual([]);
          const state = seen.find((l) => l.startsWith(`see ${fx.stateDir} `)) ?? '';
          expect(state).toMatch(/ (dir \[\]|error ENOENT)$/);
          const config = seen.find((l) => l.startsWith(`see ${join(fx.dir, 'snotra.config.json')} `)) ?? '';
          expect(config).toMatch(/ (file 0|error \w+)$/);
          // Outside the roots: refused (and nothing reached the host); inside the read-write root: written.
          expect(seen.find((l) => l.startsWith(`write ${join(fx.dir, `outside-${log}.txt`)} `))).toMatch(
            / error E[A-Z]+$/,
          );
          expect(existsSync(join(fx.dir, `outside-${log}.txt`))).toBe(false);
          expect(seen).toContain(`write ${join(fx.project, `inside-${log}.txt`)} written`);
          expect(readFileSync(join(fx.project, `inside-${log}.txt`), 'utf8')).toBe('probe');
        }
        // network: false → its own network namespace (the host's listener is unreachable).
        expect(lines('closed').find((l) => l.startsWith('net '))).toMatch(/^net error E[A-Z]+$/);
        expect(lines('open')).toContain('net connected');
      } finally {
        await rt.stop();
      }
    } finally {
      fx.cleanup();
    }
  }, 120_000);

  it('@modelcontextprotocol/server-everything get-env shows the sanitized environment, secret redacted', async () => {
    const fx = mcpFixture(
      () => ({
        agents: { a: { mode: 'ask' } },
        mcp: {
          servers: {
            ev: {
              command: join(BIN, 'mcp-server-everything'),
              args: ['stdio'],
              network: false,
              env: { EV_API_TOKEN: { secret: 'hostile-token' }, EV_PLAIN: 'plain-value' },
            },
          },
        },
      }),
      SECRET,
    );
    try {
      const rt = await fx.start({ a: script([{ tool: 'mcp:ev:get-env', args: {} }]) });
      try {
        await ready(rt, 'ev');
        const { seen, outcome } = await runOnce(rt, 'a');
        expect(outcome.status).toBe('completed');
        expect(seen[0]).toMatchObject({ kind: 'tool.result' });
        const text = JSON.stringify(seen[0]);
        // The server really got its own variables (the secret one shown redacted)…
        expect(text).toContain('EV_PLAIN');
        expect(text).toContain('plain-value');
        expect(text).toContain('EV_API_TOKEN');
        expect(text).not.toContain(SECRET);
        // …and nothing of the parent's own environment.
        expect(text).not.toContain(PARENT_ONLY);
        expect(text).not.toContain(PARENT_VALUE);
        expect(text).not.toContain('VITEST');
      } finally {
        await rt.stop();
      }
    } finally {
      fx.cleanup();
    }
  }, 120_000);
});
