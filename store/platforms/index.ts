import type { AuditLog } from '../audit/log.ts';
import type { StoreContext } from '../context.ts';
import { PlatformInbound } from './inbound.ts';
import { PlatformOutbound } from './outbound.ts';
import { PlatformPairing } from './pairing.ts';

export { PlatformInbound, PlatformOutbound, PlatformPairing };
export type { InboundRecord, InboundStatus, InboundUpdate } from './inbound.ts';
export type { OutboundRecord, OutboundStatus, PartResult, UndeliveredPage } from './outbound.ts';
export { BadCursorError, MAX_UNDELIVERED_PAGE } from './outbound.ts';
export { DEFAULT_PAIRING_LIMITS } from './pairing.ts';
export type { ConfirmRefusal, IssueRefusal, PairedChat, PairingLimits } from './pairing.ts';

/** The durable state of platform replies: inbound journal and offsets, outbound journal, pairing. */
export class PlatformStore {
  readonly inbound: PlatformInbound;
  readonly outbound: PlatformOutbound;
  readonly pairing: PlatformPairing;

  constructor(ctx: StoreContext, audit: AuditLog) {
    this.inbound = new PlatformInbound(ctx);
    this.outbound = new PlatformOutbound(ctx, audit);
    this.pairing = new PlatformPairing(ctx, audit);
  }
}
