import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, configDir, until } from '../sidecar/client.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';

const TOKEN = 'goal-sidecar-test-token-0123456789abcdef';
const dirs: string[] = [];
let p: StartedProcess | null = null;
afterAll(async () => {
  if (p !== null) await stopProcess(p);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('goal routes of the sidecar', () => {
  it(
    'GET /v1/goals and POST /v1/goals/:id/{start,pause,resume,cancel}: token required, JSON only, human controls applied',
    { timeout: 120_000 },
    async () => {
      const dir = configDir(
        {
          agents: { worker: { mode: 'allow', model: { provider: 'scripted', script: 'worker.json' } } },
          surfaces: {
            goalLoops: [{ id: 'g', agent: 'worker', objective: 'keep going', maxIterations: 1000 }],
          },
        },
        {
          worker: [
            {
              respond: {
                kind: 'calls',
                calls: [{ id: 'c1', tool: 'shell', args: { command: 'sleep 0.2' } }],
              },
            },
            { respond: { kind: 'final', text: 'step' } },
          ],
        },
      );
      dirs.push(dir);
      p = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
        SNOTRA_SIDECAR_TOKEN: TOKEN,
      });
      const ready = await p.ready(60_000);
      const port = Number(new URL(String(ready.sidecar)).port);
      const auth = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
      const post = (path: string, headers: Record<string, string> = auth, body = '{}') =>
        call(port, 'POST', path, { headers, body });

      // No token, wrong token: refused before anything happens.
      expect((await call(port, 'GET', '/v1/goals')).status).toBe(401);
      expect((await post('/v1/goals/g/start', { 'Content-Type': 'application/json' })).status).toBe(401);
      expect(
        (
          await post('/v1/goals/g/start', {
            ...auth,
            Authorization: 'Bearer wrong-token-wrong-token-wrong-token',
          })
        ).status,
      ).toBe(401);
      // Not JSON (what a cross-site form could send): 415, nothing started.
      expect(
        (await post('/v1/goals/g/start', { Authorization: auth.Authorization, 'Content-Type': 'text/plain' }))
          .status,
      ).toBe(415);
      expect((await post('/v1/goals/g/start', auth, '{"force":true}')).status).toBe(400);
      expect((await post('/v1/goals/g/approve')).status).toBe(404);
      expect((await post('/v1/goals/nope/start')).status).toBe(404);
      const before = (await call(port, 'GET', '/v1/goals', { headers: auth })).json() as {
        goals: { id: string; record: unknown }[];
      };
      expect(before.goals).toEqual([{ id: 'g', agent: 'worker', record: null, iterations: [] }]);

      const started = await post('/v1/goals/g/start');
      expect(started.status, started.text).toBe(200);
      expect((started.json() as { goal: { status: string } }).goal.status).toBe('active');
      await until(
        async () =>
          ((
            (await call(port, 'GET', '/v1/goals', { headers: auth })).json() as {
              goals: { record: { iteration: number } }[];
            }
          ).goals[0]?.record.iteration ?? 0) >= 2,
        60_000,
        'two iterations',
      );
      const paused = await post('/v1/goals/g/pause');
      expect(paused.status, paused.text).toBe(200);
      expect((paused.json() as { goal: { status: string } }).goal.status).toBe('paused');
      expect((await post('/v1/goals/g/pause')).status).toBe(409);
      // Resume is a human control like the others: no token, a foreign page or Host change nothing.
      for (const [headers, status] of [
        [{ 'Content-Type': 'application/json' }, 401],
        [{ ...auth, Origin: 'http://evil.example' }, 403],
        [{ ...auth, Host: `evil.example:${port}` }, 403],
      ] as const) {
        const r = await post('/v1/goals/g/resume', headers);
        expect(r.status, JSON.stringify(headers)).toBe(status);
        expect(r.text).not.toContain(TOKEN);
      }
      const still = (await call(port, 'GET', '/v1/goals', { headers: auth })).json() as {
        goals: { record: { status: string } }[];
      };
      expect(still.goals[0]?.record.status).toBe('paused');
      expect((await post('/v1/goals/g/resume')).status).toBe(200);
      const cancelled = await post('/v1/goals/g/cancel');
      expect(cancelled.status).toBe(200);
      expect((cancelled.json() as { goal: { status: string; stopReason: string } }).goal).toMatchObject({
        status: 'cancelled',
        stopReason: 'cancelled_by_human',
      });
      const controls = (await call(port, 'GET', '/v1/goals', { headers: auth })).json() as {
        goals: { record: { status: string } }[];
      };
      expect(controls.goals[0]?.record.status).toBe('cancelled');
    },
  );
});
