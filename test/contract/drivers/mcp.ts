import { connectMcp, type McpConnection } from '../../mcp-surface/client.ts';
import { writeScenarioConfig } from '../config.ts';
import { launcherToken } from './start-process.ts';
import type { SurfaceDriver, SurfaceRuntime } from './types.ts';

/**
 * MCP: `snotra mcp --config F` spawned by the SDK's stdio client (as Claude Desktop does), each
 * message a `run_task` call (unattended, `waitMs: 0`: the case watches the run itself). Its
 * sidecar is the human's surface for decisions; closing the client closes the server.
 */
export const mcpDriver: SurfaceDriver = {
  surface: 'mcp',
  interaction: 'unattended',
  entry: '`snotra mcp` spawned by the SDK `StdioClientTransport`; `tools/call run_task`',
  async start(scenario, folder) {
    const config = writeScenarioConfig(folder, scenario);
    const texts = new Map(scenario.agents.map((a) => [a.id, a.text]));
    const token = launcherToken();
    let conn: McpConnection;
    let port = 0;
    let logs = '';
    const launch = async () => {
      conn = await connectMcp(['--config', config], { ...scenario.env, SNOTRA_SIDECAR_TOKEN: token });
      port = Number(new URL(String(conn.ready().sidecar)).port);
    };
    await launch();
    const rt: SurfaceRuntime = {
      pid: () => conn.pid,
      sidecar: () => ({ port, token }),
      trigger: async (agentId) => {
        const text = texts.get(agentId);
        if (text === null || text === undefined) throw new Error(`mcp: agent ${agentId} has no message`);
        const r = await conn.call('run_task', { agent: agentId, text, waitMs: 0 });
        if (r.isError) throw new Error(`mcp run_task: ${r.text}`);
        return r.value.runId as string;
      },
      restart: async () => {
        await conn.close();
        logs += conn.stderr();
        await launch();
      },
      close: async () => {
        await conn.close();
        logs += conn.stderr();
      },
      logs: () => logs + conn.stderr(),
    };
    return rt;
  },
};
