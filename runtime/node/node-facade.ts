import type { Logger } from 'pino';
import type { ClusterNode } from '../cluster/index.ts';
import { InspectFacade } from '../inspect/inspect-facade.ts';
import type { Inspector } from '../inspect/inspector.ts';
import type { PlatformHost } from '../platforms/host.ts';

/** What the node facade is made of (the runtime's parts at boot). */
export interface NodeParts {
  readonly logger: Logger;
  readonly cluster: ClusterNode | null;
  readonly inspector: Inspector;
  readonly platforms: PlatformHost;
}

/**
 * `runtime.node`: this runtime as the process its surfaces run in, with what belongs to this
 * process and to no other node of a cluster: its logger, its membership of the cluster, the live
 * actors it holds and the host its platform gateways run on. The runtime's state is read through
 * `runtime.read` and changed through the other facades; none of it is here.
 */
export class NodeFacade {
  readonly #parts: NodeParts;
  /** The live actor tree of this process (agents → runs → sub-agent runs → approvals): `actors()`, `onActorEvent`. */
  readonly inspect: InspectFacade;

  constructor(parts: NodeParts) {
    this.#parts = parts;
    this.inspect = new InspectFacade(parts.inspector);
  }

  /** The runtime's logger (redacted): surfaces log through it. */
  get logger(): Logger {
    return this.#parts.logger;
  }

  /** This runtime as a node of a cluster (`node.id` in config), or null on a single node (README "Cluster"). */
  get cluster(): ClusterNode | null {
    return this.#parts.cluster;
  }

  /** Platform replies (surfaces.platforms): journals, pairing and runs for this process's platform gateways. */
  get platforms(): PlatformHost {
    return this.#parts.platforms;
  }
}
