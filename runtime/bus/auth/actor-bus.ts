import type { AuditEventInput } from '../../../store/index.ts';
import type { AnyKindRegistry, Bus } from '../bus-api.ts';
import type { PermissionViolation } from '../bus.ts';
import { connectBus } from '../connect.ts';
import { silentLogger, type BusLogger } from '../logger.ts';
import type { BusGrant } from './grants.ts';
import type { BusMinter, MintedUser } from './mint.ts';

/** Where violations are audited: the store's audit log (structurally). */
export interface ViolationAudit {
  append(input: AuditEventInput): unknown;
}

/** Who an actor connection belongs to, for the audit and the server's view. */
export interface ActorIdentity {
  /** The agent the actor runs (the audit's `agentId`). */
  readonly agentId: string;
  /** The run, for a per-run (sub-agent) connection. */
  readonly runId?: string;
  /** Connection and JWT name, e.g. `actor-agent-<id>`. */
  readonly name: string;
}

/** Options of {@link ActorBusFactory}. */
export interface ActorBusFactoryOptions<R extends AnyKindRegistry> {
  readonly minter: BusMinter;
  /** The server URL(s) (the embedded server's `url`, or `bus.url`). */
  readonly url: string | readonly string[];
  readonly kinds: R;
  readonly audit: ViolationAudit;
  readonly logger?: BusLogger;
  /**
   * Lifetime of each actor's credentials; absent: no expiry. With a lifetime, each connection is
   * re-granted (fresh JWT, reconnect) after three quarters of it, so it never reaches expiry.
   */
  readonly ttlMs?: number;
}

/** The audit record of one refused publish or subscription. */
export function violationAuditEvent(
  identity: ActorIdentity,
  publicKey: string,
  v: PermissionViolation,
): AuditEventInput {
  return {
    kind: 'bus_permission_denied',
    agentId: identity.agentId,
    ...(identity.runId === undefined ? {} : { runId: identity.runId }),
    status: 'denied',
    resource: v.subject,
    detail: {
      operation: v.operation,
      subject: v.subject,
      queue: v.queue,
      actor: identity.name,
      user: publicKey,
    },
  };
}

/**
 * Hands each actor its own bus connection with its own credentials: mints a user JWT carrying
 * exactly the actor's grant (see `grants.ts`), connects with the grant's inbox prefix, and
 * audits every permission violation the server reports on that connection
 * (`bus_permission_denied`), logging it with the subject and actor only.
 */
export class ActorBusFactory<R extends AnyKindRegistry> {
  readonly #live = new WeakMap<Bus<R>, { identity: ActorIdentity; current: MintedUser }>();
  /** Re-grants done by the refresh timer (for monitoring and tests). */
  refreshes = 0;

  constructor(private readonly options: ActorBusFactoryOptions<R>) {}

  #mint(identity: ActorIdentity, grant: BusGrant): MintedUser {
    return this.options.minter.mint(grant, {
      name: identity.name,
      ...(this.options.ttlMs === undefined ? {} : { ttlMs: this.options.ttlMs }),
    });
  }

  /** Opens the actor's connection with credentials minted from `grant`. */
  async connect(identity: ActorIdentity, grant: BusGrant): Promise<Bus<R>> {
    const state = { identity, current: this.#mint(identity, grant) };
    const logger = this.options.logger ?? silentLogger;
    const bus = await connectBus({
      target: { url: this.options.url, credentials: state.current.credentials },
      credentialsProvider: () => state.current.credentials,
      kinds: this.options.kinds,
      source: identity.name,
      name: identity.name,
      inboxPrefix: grant.inboxPrefix,
      logger,
      onPermissionViolation: (v) => {
        try {
          this.options.audit.append(violationAuditEvent(identity, state.current.publicKey, v));
        } catch (err) {
          logger.error(
            { actor: identity.name, err: { name: (err as Error).name, message: (err as Error).message } },
            'bus: could not audit a permission violation',
          );
        }
      },
    });
    this.#live.set(bus, state);
    this.#scheduleRefresh(bus, logger);
    return bus;
  }

  #scheduleRefresh(bus: Bus<R>, logger: BusLogger): void {
    const ttl = this.options.ttlMs;
    if (ttl === undefined) return;
    let closed = false;
    let timer: NodeJS.Timeout | null = null;
    const arm = (): void => {
      timer = setTimeout(
        () => {
          const state = this.#live.get(bus);
          if (closed || state === undefined) return;
          this.regrant(bus, state.current.grant)
            .then(() => {
              this.refreshes++;
            })
            .catch((err: unknown) => {
              if (!closed)
                logger.error(
                  { actor: state.identity.name, err: { message: (err as Error).message } },
                  'bus: could not refresh actor credentials',
                );
            })
            .finally(() => {
              if (!closed) arm();
            });
        },
        Math.max(1000, Math.floor(ttl * 0.75)),
      );
      timer.unref();
    };
    arm();
    void bus.closed.then(() => {
      closed = true;
      if (timer !== null) clearTimeout(timer);
    });
  }

  /**
   * Replaces a live actor connection's permissions (its envelope changed, e.g. a new mode):
   * mints credentials from `grant` and reconnects, so the server applies them; subscriptions are
   * restored on the new session. Resolves once the new session is up and the server answered on it.
   * Messages in flight during the reconnect may be lost; JetStream redelivers unacknowledged ones.
   */
  async regrant(bus: Bus<R>, grant: BusGrant): Promise<void> {
    const state = this.#live.get(bus);
    if (state === undefined) throw new Error('regrant: this bus was not opened by this factory');
    if (grant.inboxPrefix !== state.current.grant.inboxPrefix) {
      throw new Error('regrant: a connection keeps its inbox prefix; open a new one for another actor');
    }
    state.current = this.#mint(state.identity, grant);
    // Listen before forcing it: the reconnect is reported once the new session is up.
    const reconnected = (async () => {
      for await (const st of bus.nats.status()) if (st.type === 'reconnect') return;
    })();
    await bus.nats.reconnect();
    await reconnected;
    await bus.flush();
  }
}
