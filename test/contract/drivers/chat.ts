import { call } from '../../sidecar/client.ts';
import { writeScenarioConfig } from '../config.ts';
import { startRuntimeProcess } from './start-process.ts';
import type { SurfaceDriver } from './types.ts';

/** Chat: `snotra start`, each message a `POST /v1/chat/:agent/messages` on its sidecar (attended). */
export const chatDriver: SurfaceDriver = {
  surface: 'chat',
  interaction: 'attended',
  entry: '`snotra start` + `POST /v1/chat/:agent/messages` on the sidecar (bearer token)',
  async start(scenario, folder) {
    const config = writeScenarioConfig(folder, scenario);
    const texts = new Map(scenario.agents.map((a) => [a.id, a.text]));
    return startRuntimeProcess(config, scenario.env, (rt) => async (agentId) => {
      const text = texts.get(agentId);
      if (text === null || text === undefined) throw new Error(`chat: agent ${agentId} has no message`);
      const { port, token } = rt.sidecar();
      const r = await call(port, 'POST', `/v1/chat/${agentId}/messages`, {
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ text }),
      });
      if (r.status !== 202) throw new Error(`chat: HTTP ${r.status} ${r.text}`);
      return (r.json() as { runId: string }).runId;
    });
  },
};
