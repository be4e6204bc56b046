/** The runtime's pid file in the state dir (mode 0600), read by the CLI's ancestry check. */
export const RUNTIME_FILE = 'runtime.json';
