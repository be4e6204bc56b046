/** Stable codes of `ModelProviderError`. */
export const ModelErrorCode = {
  /** The server answered with an HTTP error status. */
  http: 'model_http_error',
  /** The server could not be reached (DNS, refused, reset, TLS) or did not answer in time. */
  connection: 'model_connection_error',
  /** The stream carried an `error` object or event after HTTP 200. */
  stream: 'model_stream_error',
  /** The stream ended before its end marker (`[DONE]`, `message_stop`) or finish reason. */
  truncated: 'model_stream_truncated',
  /** The model stopped at its output token limit (`length`, `max_tokens`). */
  length: 'model_length_limit',
  /** The provider's content filter stopped the answer. */
  filtered: 'model_content_filter',
  /** The response broke the protocol or one of the bounds in `limits.ts`. */
  protocol: 'model_protocol_error',
  /** The provider's settings are unusable (missing key, bad URL). */
  config: 'model_config_error',
  /** The run was stopped while the step was in flight. */
  aborted: 'model_aborted',
} as const;
export type ModelErrorCode = (typeof ModelErrorCode)[keyof typeof ModelErrorCode];

/**
 * A model step that failed. The message says what happened and what to check (HTTP status,
 * the provider's error code); it never contains the API key or request headers. Retryable
 * errors are retried by the provider before the first streamed byte only.
 */
export class ModelProviderError extends Error {
  readonly code: ModelErrorCode;
  readonly status: number | null;
  readonly providerCode: string | null;
  readonly retryable: boolean;
  /** A wait the server asked for (`Retry-After`), in ms. */
  readonly retryAfterMs: number | null;

  constructor(
    code: ModelErrorCode,
    message: string,
    details: {
      readonly status?: number | null;
      readonly providerCode?: string | null;
      readonly retryable?: boolean;
      readonly retryAfterMs?: number | null;
    } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ModelProviderError';
    this.code = code;
    this.status = details.status ?? null;
    this.providerCode = details.providerCode ?? null;
    this.retryable = details.retryable ?? false;
    this.retryAfterMs = details.retryAfterMs ?? null;
  }
}
