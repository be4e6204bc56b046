/** Stable codes of every error the bus layer throws. Callers branch on `code`, never on the message. */
export const BusErrorCode = {
  /** The `nats-server` binary was not found; the message says how to install it. */
  NatsServerMissing: 'nats_server_missing',
  /** The embedded server exited before it accepted connections. */
  NatsServerStartFailed: 'nats_server_start_failed',
  /** The embedded server did not accept connections within the start timeout. */
  NatsServerStartTimeout: 'nats_server_start_timeout',
  /** The embedded launcher cannot run on this platform (it needs a POSIX `sh` and process groups). */
  UnsupportedPlatform: 'nats_unsupported_platform',
  /** The state dir cannot hold the nats-server files (not writable, or quotes, backslash, `$` or control characters in its path). */
  InvalidStateDir: 'nats_invalid_state_dir',
  /** A bus URL or credentials object is malformed (for example credentials embedded in the URL). */
  InvalidTarget: 'bus_invalid_target',
  /** The server refused the credentials. */
  AuthFailed: 'bus_auth_failed',
  /** The server could not be reached. */
  ConnectFailed: 'bus_connect_failed',
  /** A subject token is empty, too long or contains `.`, `*`, `>`, whitespace or control characters. */
  InvalidSubject: 'bus_invalid_subject',
  /** A kind name is malformed, reserved or registered twice. */
  InvalidKind: 'bus_invalid_kind',
  /** A kind that the connection's registry does not know was used. */
  UnknownKind: 'bus_unknown_kind',
  /** An outgoing payload does not satisfy its kind's schema. */
  InvalidPayload: 'bus_invalid_payload',
  /** An outgoing envelope is larger than the configured maximum. */
  PayloadTooLarge: 'bus_payload_too_large',
  /** `reply` was called for a message that carries no reply subject. */
  NoReplySubject: 'bus_no_reply_subject',
  /** A request got no reply within its timeout. */
  RequestTimeout: 'bus_request_timeout',
  /** Nobody subscribes to the requested subject. */
  NoResponders: 'bus_no_responders',
  /** The reply to a request failed validation (see `reason`). */
  InvalidReply: 'bus_invalid_reply',
  /** The responder answered with a `bus.error` envelope (see `remoteCode`). */
  RequestFailed: 'bus_request_failed',
  /** The connection is closed or draining. */
  Closed: 'bus_closed',
  /** The per-actor auth keys (seeds file or a given signing key) are missing, malformed or too open. */
  InvalidAuthKeys: 'bus_invalid_auth_keys',
  /** A bus grant asks for a subject it may not have (another actor's, the decision subjects, a bad pattern). */
  InvalidGrant: 'bus_invalid_grant',
} as const;
/** One of the {@link BusErrorCode} values. */
export type BusErrorCode = (typeof BusErrorCode)[keyof typeof BusErrorCode];

/**
 * The one error class of the bus layer. `code` is stable snake_case; the message is for humans and
 * never contains the bus token or a message body.
 */
export class BusError extends Error {
  override readonly name: string = 'BusError';
  /** Small, secret-free facts about the failure (exit code, reason, remote code, ...). */
  readonly details: Readonly<Record<string, string | number | boolean | null>>;
  constructor(
    readonly code: BusErrorCode,
    message: string,
    options?: ErrorOptions & { details?: Readonly<Record<string, string | number | boolean | null>> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.details = options?.details ?? {};
  }
}

/** The install hint given when `nats-server` is missing. */
export const NATS_INSTALL_HINT =
  'Install it with `apt-get install -y nats-server` (Debian/Ubuntu) or `brew install nats-server` (macOS), ' +
  'or set `bus.serverPath` in the config to the path of the binary, or configure `bus.url` to use an existing NATS server.';

/** `nats-server` is not installed (or not where it was said to be). Code `nats_server_missing`. */
export class NatsServerMissingError extends BusError {
  override readonly name: string = 'NatsServerMissingError';
  constructor(readonly searched: readonly string[]) {
    super(
      BusErrorCode.NatsServerMissing,
      `nats-server was not found (looked in: ${searched.join(', ')}). ${NATS_INSTALL_HINT}`,
    );
  }
}

/**
 * Replaces every occurrence of each secret in `text` by `[redacted]`. Used on anything that came from a
 * child process (stderr) before it reaches an error message or a log.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('[redacted]');
  return out;
}
