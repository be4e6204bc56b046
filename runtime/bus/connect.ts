import {
  connect,
  errors as natsErrors,
  jwtAuthenticator,
  type ConnectionOptions,
  type NatsConnection,
} from '@nats-io/transport-node';
import type { AnyKindRegistry, Bus } from './bus-api.ts';
import { createBus, type PermissionViolation } from './bus.ts';
import { BusError, BusErrorCode } from './errors.ts';
import { loggableError, silentLogger, type BusLogger } from './logger.ts';
import { checkTarget, type BusTarget } from './target.ts';
import { settleRequestsQuietly } from './request-settle.ts';
import { flushOncePerTurn } from './turn-flush.ts';

/** Default largest envelope, in bytes (bus messages are control messages, not bulk data). */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024;

/** Options of {@link connectBus}. */
export interface ConnectBusOptions<R extends AnyKindRegistry> {
  /** The embedded server (`embedded.target()`) or a configured `bus.url` with resolved credentials. */
  readonly target: BusTarget;
  /** The payload schemas by kind (see `defineKinds`). */
  readonly kinds: R;
  /** Stamped into every envelope's `source`, e.g. `runtime` or `sidecar`; 1-128 characters. */
  readonly source: string;
  /** Where drops, handler failures and connection changes are logged. Default: silent. */
  readonly logger?: BusLogger;
  /** Largest envelope sent or accepted; capped by the server's `max_payload`. Default 256 KiB. */
  readonly maxMessageBytes?: number;
  /** Connection timeout. Default 5000 ms. */
  readonly connectTimeoutMs?: number;
  /** Default timeout of `request`. Default 5000 ms. */
  readonly requestTimeoutMs?: number;
  /** Reconnect after a lost connection (useful for an external NATS). Default true. */
  readonly reconnect?: boolean;
  /** Connection name shown by the server's monitoring. Default: `snotra-<source>`. */
  readonly name?: string;
  /** Prefix of this connection's request inboxes (per-actor auth: the grant's `inboxPrefix`). Default `_INBOX`. */
  readonly inboxPrefix?: string;
  /**
   * Per-actor auth: the user JWT and seed are read from here at every (re)connect, so new
   * credentials take effect on the next reconnect. Takes precedence over `target.credentials`.
   */
  readonly credentialsProvider?: () => { readonly jwt: string; readonly seed: Uint8Array };
  /** Called for each permission violation the server reports on this connection (after it is logged). */
  readonly onPermissionViolation?: (violation: PermissionViolation) => void;
}

function credentialOptions(target: ReturnType<typeof checkTarget>): Partial<ConnectionOptions> {
  const c = target.credentials;
  if (c === undefined) return {};
  if ('jwt' in c) return { authenticator: jwtAuthenticator(c.jwt, c.seed) };
  return { ...c };
}

/**
 * Connects to NATS and returns a {@link Bus}. Throws `bus_invalid_target` for a malformed target,
 * `bus_auth_failed` when the server refuses the credentials (cause: the client's `AuthorizationError`)
 * and `bus_connect_failed` when it cannot be reached. Warns through the logger when credentials would
 * travel to a remote host over plain `nats://`. No error or log line contains a credential.
 */
export async function connectBus<R extends AnyKindRegistry>(options: ConnectBusOptions<R>): Promise<Bus<R>> {
  const logger = options.logger ?? silentLogger;
  const target = checkTarget(options.target);
  if (options.source.length === 0 || options.source.length > 128) {
    throw new BusError(BusErrorCode.InvalidTarget, 'source must be 1-128 characters');
  }
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 256) {
    throw new BusError(BusErrorCode.InvalidTarget, 'maxMessageBytes must be an integer >= 256');
  }
  if (target.cleartextRemote && target.credentials !== undefined) {
    logger.warn(
      { servers: target.servers },
      'bus: credentials are sent to a remote NATS over plain nats://; use tls://',
    );
  }
  const reconnect = options.reconnect ?? true;
  if (!settleRequestsQuietly()) {
    logger.debug({}, 'bus: NATS client internals differ from 3.4; each request builds a cancel error');
  }
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: target.servers,
      ...(options.credentialsProvider === undefined
        ? credentialOptions(target)
        : {
            authenticator: jwtAuthenticator(
              () => options.credentialsProvider!().jwt,
              () => options.credentialsProvider!().seed,
            ),
          }),
      ...(options.inboxPrefix === undefined ? {} : { inboxPrefix: options.inboxPrefix }),
      name: options.name ?? `snotra-${options.source}`,
      timeout: options.connectTimeoutMs ?? 5000,
      reconnect,
      maxReconnectAttempts: reconnect ? -1 : 0,
      // No Error (with a captured stack) built per request and per timer: JetStream publishes
      // are requests, so that was one stack capture per message on the hot path. Failures still
      // arrive as the client's typed errors, wrapped in a BusError naming the subject.
      noAsyncTraces: true,
    });
  } catch (err) {
    if (err instanceof natsErrors.AuthorizationError) {
      throw new BusError(BusErrorCode.AuthFailed, 'the NATS server refused the bus credentials', {
        cause: err,
      });
    }
    logger.warn({ servers: target.servers, err: loggableError(err) }, 'bus: connection failed');
    throw new BusError(
      BusErrorCode.ConnectFailed,
      `could not connect to NATS at ${target.servers.join(', ')}`,
      {
        cause: err,
      },
    );
  }
  if (!flushOncePerTurn(nc)) {
    logger.debug({}, 'bus: NATS client internals differ from 3.4; each publish is written on its own');
  }
  return createBus(nc, {
    kinds: options.kinds,
    source: options.source,
    logger,
    maxMessageBytes,
    requestTimeoutMs: options.requestTimeoutMs ?? 5000,
    ...(options.onPermissionViolation === undefined
      ? {}
      : { onPermissionViolation: options.onPermissionViolation }),
  });
}
