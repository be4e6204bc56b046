/**
 * Bounds on what a model provider accepts from a server, so a hostile or broken endpoint can
 * neither exhaust memory nor stall a run. A response that crosses one is a step failure, never
 * a truncated answer.
 */
export const MODEL_LIMITS = {
  /** Bytes of one streamed response body (all events together). */
  responseBytes: 8 * 1024 * 1024,
  /** Characters of one SSE line. */
  lineChars: 1024 * 1024,
  /** Bytes of an error body read for its message. */
  errorBodyBytes: 64 * 1024,
  /** Tool calls in one model step. */
  toolCalls: 64,
  /** Characters of one tool call's JSON arguments. */
  argumentChars: 1024 * 1024,
  /** Characters of a tool name. */
  toolNameChars: 256,
  /** Characters of the answer text of one step. */
  textChars: 1024 * 1024,
  /** Characters of a provider's error message kept in the run's failure message. */
  providerMessageChars: 300,
  /** The longest wait a `Retry-After` may ask for; longer waits fail the step at once. */
  retryAfterMs: 60_000,
  /** The longest backoff between two attempts when the server gives no `Retry-After`. */
  backoffMaxMs: 8_000,
} as const;
