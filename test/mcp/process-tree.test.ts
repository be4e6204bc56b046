/**
 * MCP server processes belong to the runtime: `snotra start` (a real process) starts them in the
 * sandbox; after the runtime is SIGKILLed no server process is left (lifeline, `--die-with-parent`).
 * A server that crashes is reported, its tools leave the catalog, and it is restarted.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSnotra, stopProcess } from '../support/snotra-process.ts';
import { eventually, HOSTILE, hostileLog, hostileServer, mcpFixture, ready } from './support.ts';
import { appendFileSync } from 'node:fs';
import { createRuntimeMcpHost } from '../../runtime/mcp/host.ts';
import { createPolicyEnvironment } from '../../runtime/policy/environment.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createSecretResolver } from '../../runtime/secrets/index.ts';
import { MemorySecretStore } from '../../runtime/secrets/memory.ts';
import { Redactor } from '../../store/index.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { hostMcp } from './hosted.ts';

/** Host pids whose command line contains `marker`. */
function withMarker(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (cmd.includes(marker) && !/\) Z /.test(stat)) out.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

const SECRET = 'pt-secret-Kq2-process-tree';

describe('MCP server process trees', () => {
  it('no server process outlives a SIGKILLed runtime', async () => {
    const fx = mcpFixture(() => ({}), SECRET);
    const marker = `marker-${randomUUID()}`;
    mkdirSync(join(fx.project, '.hostile'), { recursive: true });
    const config = {
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      secrets: { backend: 'env' },
      agents: { a: { mode: 'ask', model: { provider: 'scripted', script: 'script.json' } } },
      mcp: {
        servers: {
          h: { ...hostileServer(fx.project), args: [HOSTILE, marker] },
          h2: { ...hostileServer(fx.project), args: [HOSTILE, marker, 'second'] },
        },
      },
    };
    writeFileSync(join(fx.dir, 'script.json'), JSON.stringify([]));
    writeFileSync(join(fx.dir, 'snotra.config.json'), JSON.stringify(config));
    const p = startSnotra(['start', '--config', join(fx.dir, 'snotra.config.json')], {
      SNOTRA_SECRET_HOSTILE_TOKEN: SECRET,
    });
    try {
      await p.ready(60_000);
      // Both servers run (node + its bwrap + the lifeline watcher hold the marker).
      await eventually(
        () => hostileLog(fx.project).filter((l) => l.startsWith('started')).length >= 2,
        30_000,
        'servers started',
      );
      expect(withMarker(marker).length).toBeGreaterThanOrEqual(2);
      p.child.kill('SIGKILL');
      await p.exited;
      await eventually(() => withMarker(marker).length === 0, 20_000, 'no server process left');
      expect(withMarker(marker)).toEqual([]);
      expect(p.stdout() + p.stderr()).not.toContain(SECRET);
    } finally {
      if (withMarker(marker).length > 0) await stopProcess(p, 'SIGKILL');
      fx.cleanup();
    }
  }, 120_000);

  it('a crashed server is reported, its tools leave the catalog, and it is restarted with backoff', async () => {
    const fx = mcpFixture((project) => ({ mcp: { servers: { h: hostileServer(project) } } }), SECRET);
    try {
      const rt = await fx.start({ assistant: [] });
      try {
        await ready(rt, 'h');
        expect(runtimeInternals(rt).registry.get('mcp:h:lookup')).toBeDefined();
        const starts = (): number => hostileLog(fx.project).filter((l) => l.startsWith('started')).length;
        expect(starts()).toBe(1);
        appendFileSync(join(fx.project, '.hostile/control'), 'crash\n');
        // Reported (exit code 9), and nothing of its catalog is callable while it is down.
        const crashed = await eventually(
          () => {
            const s = runtimeInternals(rt).mcp?.status()[0];
            return s?.lastError?.code === 'mcp_server_crashed' ? s : null;
          },
          30_000,
          'crash reported',
        );
        expect(crashed.lastError?.message).toContain('exited with code 9');
        // Restarted after the backoff: ready again, with its tools back.
        await eventually(
          () =>
            runtimeInternals(rt).mcp?.status()[0]?.restarts === 1 &&
            runtimeInternals(rt).mcp?.status()[0]?.state === 'ready',
          30_000,
          'restarted',
        );
        expect(starts()).toBe(2);
        expect(runtimeInternals(rt).registry.get('mcp:h:lookup')).toBeDefined();
      } finally {
        await rt.stop();
      }
    } finally {
      fx.cleanup();
    }
  }, 120_000);

  it('a server that keeps failing is restarted with a backoff that doubles up to its cap', async () => {
    const fx = mcpFixture(
      () => ({
        mcp: {
          servers: {
            // A real program that exits at once (its stderr says why), each time it is started.
            dies: {
              command: process.execPath,
              args: ['-e', 'process.stderr.write("cannot start\\n"); process.exit(4)'],
              network: false,
            },
          },
        },
      }),
      SECRET,
    );
    const env = await createPolicyEnvironment(fx.loaded);
    const supervisor = new ProcessSupervisor({ sandbox: env.sandboxBackend, killGraceMs: 300 });
    const redactor = new Redactor();
    const starts: number[] = [];
    const host = createRuntimeMcpHost({
      config: fx.loaded.config,
      registry: registryFromConfig(fx.loaded),
      supervisor,
      secrets: createSecretResolver(new MemorySecretStore({}), redactor),
      redactor,
      roots: () => [
        { id: 'project', path: fx.project, access: 'read-write', primary: true, source: 'workspace' },
      ],
      limits: { restartBaseMs: 200, restartMaxMs: 800 },
      onStatus: (s) => {
        if (s.state === 'starting') starts.push(performance.now());
      },
    });
    try {
      await host.start();
      expect(host.status()[0]?.lastError?.code).toBe('mcp_start_failed');
      expect(host.status()[0]?.lastError?.message).toContain('cannot start');
      await eventually(() => starts.length >= 6, 60_000, 'six starts');
      await host.stop();
      const gaps = starts.slice(1, 6).map((t, i) => t - (starts[i] ?? 0));
      // Each wait is at least its backoff: 200, 400, then the 800 ms cap.
      const floors = [200, 400, 800, 800, 800];
      gaps.forEach((gap, i) => expect(gap, `gap ${i + 1}`).toBeGreaterThanOrEqual((floors[i] ?? 0) - 5));
      // Capped: an uncapped fifth wait would be 3200 ms.
      expect(gaps[4]).toBeLessThan(3200);
      expect(host.status()[0]?.restarts).toBeGreaterThanOrEqual(5);
    } finally {
      await host.stop();
      await supervisor.shutdown();
      fx.cleanup();
    }
  }, 120_000);

  it('the first listing has one deadline: pages each in time but together too slow fail the start', async () => {
    const fx = mcpFixture((project) => {
      const server = hostileServer(project);
      return {
        mcp: {
          servers: {
            h: {
              ...server,
              env: { ...(server.env as Record<string, unknown>), HOSTILE_PAGE_DELAY_MS: '500' },
            },
          },
        },
      };
    }, SECRET);
    const env = await createPolicyEnvironment(fx.loaded);
    const supervisor = new ProcessSupervisor({ sandbox: env.sandboxBackend, killGraceMs: 300 });
    const redactor = new Redactor();
    const hostWith = (startTimeoutMs: number) =>
      createRuntimeMcpHost({
        config: fx.loaded.config,
        registry: registryFromConfig(fx.loaded),
        supervisor,
        secrets: createSecretResolver(new MemorySecretStore({ 'hostile-token': SECRET }), redactor),
        redactor,
        roots: () => [
          { id: 'project', path: fx.project, access: 'read-write', primary: true, source: 'workspace' },
        ],
        limits: { startTimeoutMs, restartBaseMs: 120_000, restartMaxMs: 120_000 },
      });
    try {
      // Three pages of 500 ms each: every page is within 1200 ms, the listing is not.
      const tight = hostWith(1200);
      try {
        await tight.start();
        expect(tight.status()[0]?.state).toBe('crashed');
        expect(tight.status()[0]?.lastError?.code).toBe('mcp_start_failed');
        expect(tight.status()[0]?.lastError?.message).toContain('tools/list');
      } finally {
        await tight.stop();
      }
      // The benign look-alike: the same server within a limit that fits the whole listing.
      const roomy = hostWith(20_000);
      try {
        await roomy.start();
        expect(roomy.status()[0]?.state).toBe('ready');
        expect(roomy.tools('h')?.map((t) => t.tool)).toContain('lookup');
      } finally {
        await roomy.stop();
      }
    } finally {
      await supervisor.shutdown();
      fx.cleanup();
    }
  }, 120_000);

  it('while a crashed server waits for its restart, its tools are out of the catalog and calls are refused', async () => {
    const fx = mcpFixture((project) => ({ mcp: { servers: { h: hostileServer(project) } } }), SECRET);
    const { host, registry, supervisor, call, close } = await hostMcp(fx, {
      secrets: { 'hostile-token': SECRET },
      limits: { restartBaseMs: 120_000, restartMaxMs: 120_000 },
    });
    try {
      await host.start();
      const before = registry.get('mcp:h:lookup');
      expect(before?.status === 'ok' && before.digest).toMatch(/^[0-9a-f]{64}$/);
      appendFileSync(join(fx.project, '.hostile/control'), 'crash\n');
      await eventually(() => host.status()[0]?.state === 'crashed', 30_000, 'crashed');
      expect(registry.names().filter((n) => n.startsWith('mcp:h:'))).toEqual([]);
      // Decided on the declaration listed before the crash.
      const digest = before?.status === 'ok' ? before.digest : undefined;
      await expect(call('mcp:h:lookup', { q: 'x' }, digest)).rejects.toMatchObject({
        code: 'mcp_server_unavailable',
      });
      // Its whole process tree is gone, not only its main program.
      await eventually(() => supervisor.children.length === 0, 20_000, 'tree ended');
    } finally {
      await close();
    }
  }, 120_000);

  it('a message over the line limit is dropped as it streams: the call fails mcp_invalid_response without a retry, the server goes on', async () => {
    const fx = mcpFixture((project) => ({ mcp: { servers: { h: hostileServer(project) } } }), SECRET);
    const { host, call, close } = await hostMcp(fx, {
      secrets: { 'hostile-token': SECRET },
      limits: { maxLineBytes: 64 * 1024, restartBaseMs: 120_000, restartMaxMs: 120_000 },
    });
    try {
      await host.start();
      await expect(call('mcp:h:huge', {})).rejects.toMatchObject({ code: 'mcp_invalid_response' });
      const status = host.status()[0];
      expect(status?.state).toBe('ready');
      expect(status?.lastError).toEqual({
        code: 'mcp_invalid_response',
        message: 'the server sent a message longer than 65536 bytes; it was discarded',
      });
      expect(hostileLog(fx.project).filter((l) => l.startsWith('call huge'))).toHaveLength(1);
    } finally {
      await close();
    }
  }, 120_000);
});
