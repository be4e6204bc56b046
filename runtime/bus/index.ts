/**
 * The bus layer of the runtime (DESIGN.md §9): the embedded nats-server launcher, the connection
 * factory, versioned subjects and zod-validated envelopes.
 */
export {
  type AnyKindRegistry,
  type Bus,
  type BusHandler,
  type BusSubscription,
  type EnvelopeOf,
  type MessageContext,
  type PublishOptions,
  type RequestOptions,
} from './bus-api.ts';
export { connectBus, DEFAULT_MAX_MESSAGE_BYTES, type ConnectBusOptions } from './connect.ts';
export {
  startEmbeddedNats,
  type EmbeddedNats,
  type EmbeddedNatsOptions,
  type NatsExitInfo,
} from './embedded.ts';
export {
  decodeEnvelope,
  encodeEnvelope,
  ENVELOPE_VERSION,
  InvalidReason,
  type Envelope,
} from './envelope.ts';
export { BusError, BusErrorCode, NATS_INSTALL_HINT, NatsServerMissingError } from './errors.ts';
export {
  BUS_ERROR_KIND,
  defineKinds,
  type KindName,
  type KindRegistry,
  type KindSchemas,
  type PayloadIn,
  type PayloadOut,
} from './kinds.ts';
export { silentLogger, type BusLogger } from './logger.ts';
export { TOKEN_ENV } from './nats-config.ts';
export { type BusStats } from './stats.ts';
export {
  isSubject,
  isSubjectPattern,
  subject,
  SUBJECT_PREFIX,
  subjectPattern,
  Wildcard,
  type Subject,
  type SubjectPattern,
} from './subjects.ts';
export { type BusCredentials, type BusTarget } from './target.ts';
export {
  isTraceparent,
  NO_TRACE,
  readTraceHeaders,
  traceHeaders,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  type TraceContextValues,
  type TraceOf,
} from './trace-headers.ts';
