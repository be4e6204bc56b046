import { descendsFrom } from '../../runtime/index.ts';
import type { HelloReply } from '../join/protocol.ts';
import { ClientError } from './errors.ts';
import { connectJoinSocket, JoinConnection } from './joined.ts';

/**
 * A single-use login URL of the web app of the runtime running on `stateDir`, asked over its
 * join socket (only the local user who runs it can ask). `not_running` when none runs there;
 * `joined_from_agent_process` when this process descends from it (an agent's tool must not get
 * a browser session that can decide approvals).
 */
export async function askLoginUrl(stateDir: string): Promise<{ url: string; pid: number }> {
  const socket = await connectJoinSocket(stateDir);
  if (socket === null)
    throw new ClientError(
      'not_running',
      `no runtime runs on state dir ${stateDir}: start one with \`snotra start\` (or \`snotra app\`), or give --config/--state-dir`,
    );
  const conn = new JoinConnection(socket, () => {});
  try {
    const hello = (await conn.request({ type: 'hello' })) as unknown as HelloReply;
    if (descendsFrom(hello.pid))
      throw new ClientError(
        'joined_from_agent_process',
        'a process started by the runtime (an agent’s tool) cannot open its web app',
      );
    const reply = await conn.request({ type: 'login' });
    return { url: String(reply.url), pid: hello.pid };
  } finally {
    conn.close();
  }
}
