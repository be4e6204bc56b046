/**
 * The runtime's entry point for surfaces (surfaces/**): the only runtime module they import.
 */
export { makeRunId, parseRunId } from '../machines/run/run-id.ts';
export type { RunIdParts } from '../machines/run/run-id.ts';
