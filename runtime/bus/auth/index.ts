/** Per-actor authority on the bus: decentralized NATS auth minted by the runtime's gateway. */
export {
  ActorBusFactory,
  violationAuditEvent,
  type ActorBusFactoryOptions,
  type ActorIdentity,
  type ViolationAudit,
} from './actor-bus.ts';
export {
  ACTOR_DENY,
  AGENT_INPUT_SUBJECTS,
  agentGrant,
  assertActorGrant,
  childGrant,
  DECISION_SUBJECTS,
  gatewayGrant,
  grantAllows,
  scopeInbox,
  scopeNamespace,
  type ActorScope,
  type BusGrant,
  type ChildGrantRequest,
  type NarrowedSubject,
} from './grants.ts';
export { decodeJwt, signJwt, type DecodedJwt, type JwtClaims } from './jwt.ts';
export {
  generateBusAuthKeys,
  loadOrCreateBusAuthKeys,
  signingKeyFromSeed,
  SEEDS_FILE,
  type BusAuthKeys,
} from './keys.ts';
export { BusMinter, type BusUserCredentials, type MintedUser, type MintOptions } from './mint.ts';
export { covers, matches, overlaps } from './patterns.ts';
export {
  operatorConfigLines,
  operatorJwts,
  RUNTIME_ACCOUNT_NAME,
  type OperatorJwts,
} from './server-config.ts';
export { busAuthDir, embeddedBusAuth, externalBusAuth, type EmbeddedBusAuth } from './setup.ts';
export { AGENT_STREAM_NAME, agentConsumerName } from './stream-names.ts';
