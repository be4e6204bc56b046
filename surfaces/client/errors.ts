/**
 * A client request the runtime refused or could not answer, with a stable snake_case code
 * (`unknown_agent`, `session_not_found`, `session_busy`, `runtime_gone`, …) and a sentence
 * naming what was wrong.
 */
export class ClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}
