import type { Logger } from 'pino';
import { AgentQueue } from '../agent-queue.ts';
import type { RuntimeBusAuth } from '../config/adapters/bus-auth.ts';
import { connectBus, startEmbeddedNats, type Bus, type BusTarget, type EmbeddedNats } from '../bus/index.ts';
import { RUNTIME_KINDS, type RuntimeKinds } from '../messages.ts';

/**
 * Starts the embedded nats-server (when no bus target is configured), connects and opens the
 * JetStream agent queue. A step that fails undoes the steps before it, so a rejected promise
 * leaves nothing running.
 */
export async function openBus(
  configured: BusTarget | null,
  busAuth: RuntimeBusAuth | null,
  stateDir: string,
  logger: Logger,
  serverPath?: string,
): Promise<{ nats: EmbeddedNats | null; bus: Bus<RuntimeKinds>; queue: AgentQueue }> {
  const nats =
    configured === null
      ? await startEmbeddedNats({
          stateDir,
          logger,
          ...(serverPath === undefined ? {} : { binary: serverPath }),
          ...(busAuth === null
            ? {}
            : { auth: { configLines: busAuth.configLines ?? [], credentials: busAuth.gateway } }),
        })
      : null;
  let bus: Bus<RuntimeKinds> | null = null;
  try {
    bus = await connectBus({
      target:
        configured === null
          ? (nats as EmbeddedNats).target()
          : busAuth === null
            ? configured
            : { url: configured.url, credentials: busAuth.gateway },
      kinds: RUNTIME_KINDS,
      source: 'runtime',
      logger,
    });
    const queue = await AgentQueue.open(bus.nats, logger);
    return { nats, bus, queue };
  } catch (err) {
    await bus?.close().catch(() => {});
    await nats?.stop();
    throw err;
  }
}
