import type { ReadOutcome, ReadTask, ScanResult, ScanTask } from './protocol.ts';

/** Runs one scan task (see worker.mjs); never throws for a file or directory problem. */
export default function scan(task: ScanTask): ScanResult;

/** Runs one batch of read_file requests (see worker.mjs); one outcome per request, in order. */
export function readFiles(task: ReadTask): ReadOutcome[];
