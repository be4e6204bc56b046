import type { Runtime } from '../../runtime/index.ts';
import { PlatformGateway } from './gateway.ts';
import { TelegramAdapter } from './telegram.ts';

export { PlatformGateway, replyText } from './gateway.ts';
export { splitMessage } from './split.ts';
export { TelegramAdapter, TELEGRAM_API_BASE, TELEGRAM_MESSAGE_LIMIT } from './telegram.ts';
export type { PlatformAdapter, SendOutcome } from './port.ts';

/** The running platform gateways of a runtime. */
export interface Platforms {
  close(): Promise<void>;
}

/**
 * Starts one gateway per `surfaces.platforms[]` connection. Each bot token is resolved from the
 * secret store (and registered with the redactor) before the first request; a token that
 * cannot be resolved fails the start, naming the connection and the secret, never a value.
 */
export async function startPlatforms(
  runtime: Runtime,
  options: { pollTimeoutS?: number } = {},
): Promise<Platforms> {
  const host = runtime.node.platforms;
  const gateways: PlatformGateway[] = [];
  for (const cfg of host.connections) {
    let token: string;
    try {
      token = await host.token(cfg.id);
    } catch (err) {
      await Promise.all(gateways.map((g) => g.stop()));
      throw Object.assign(
        new Error(`surfaces.platforms[${cfg.id}].token: ${host.redact((err as Error).message)}`),
        { code: 'platform_token_unavailable' },
      );
    }
    const adapter = new TelegramAdapter({
      token,
      apiBase: cfg.apiBase,
      ...(options.pollTimeoutS === undefined ? {} : { pollTimeoutS: options.pollTimeoutS }),
    });
    const gateway = new PlatformGateway(host, cfg, adapter, (l) => runtime.runs.onRunEvent(l));
    gateway.start();
    gateways.push(gateway);
    host.logger.info({ platform: cfg.id, kind: cfg.kind, agent: cfg.agent }, 'platform: connected');
  }
  return {
    close: async () => {
      await Promise.all(gateways.map((g) => g.stop()));
    },
  };
}
