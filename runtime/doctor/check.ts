/** The result of one `snotra doctor` check: `fail` blocks the runtime, `warn` limits it. */
export interface DoctorCheck {
  readonly name: string;
  readonly status: 'ok' | 'warn' | 'fail';
  readonly detail: string;
  /** What to do about it (absent when ok). */
  readonly fix?: string;
}
