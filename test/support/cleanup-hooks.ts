// Setup file: runs the clean-ups helpers registered with afterEachTest (test/support/cleanup.ts).
import { afterEach } from 'vitest';
import { runCleanups } from './cleanup.ts';

afterEach(runCleanups);
