import { descendsFrom, type RewindOutcome } from '../../runtime/index.ts';
import type { HelloReply } from '../join/protocol.ts';
import { ClientError } from './errors.ts';
import { connectJoinSocket, JoinConnection, JOIN_HELLO_TIMEOUT_MS } from './joined.ts';

/**
 * `snotra rewind CHECKPOINT` beside a running `snotra start`: the rewind is made by that runtime
 * (over its join socket) so it is locked against its live runs (`rewind_blocked_by_run`).
 * Resolves null when no runtime listens on the state dir (the CLI then rewinds the state dir
 * itself). Refused (`rewind_from_agent`) from a process the runtime started.
 */
export async function rewindThroughRunning(
  stateDir: string,
  checkpoint: string,
  dryRun: boolean,
): Promise<RewindOutcome | null> {
  const socket = await connectJoinSocket(stateDir);
  if (socket === null) return null;
  const conn = new JoinConnection(socket, () => {});
  const timer = setTimeout(() => socket.destroy(), JOIN_HELLO_TIMEOUT_MS);
  try {
    const hello = (await conn.request({ type: 'hello' })) as unknown as HelloReply;
    clearTimeout(timer);
    if (descendsFrom(hello.pid))
      throw new ClientError(
        'rewind_from_agent',
        'a rewind cannot be made from a process started by the runtime (an agent’s tool)',
      );
    return (await conn.request({ type: 'rewind', checkpoint, dryRun })).outcome as RewindOutcome;
  } finally {
    clearTimeout(timer);
    conn.close();
  }
}
