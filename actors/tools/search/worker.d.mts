import type { ScanResult, ScanTask } from './protocol.ts';

/** Runs one scan task (see worker.mjs); never throws for a file or directory problem. */
export default function scan(task: ScanTask): ScanResult;
