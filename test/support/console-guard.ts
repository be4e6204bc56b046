// A test that prints unexpectedly is a failing test: XState's "sent to stopped actor" warnings,
// stray console.error calls and the like fail the test that caused them.
import { afterEach, beforeEach, expect } from 'vitest';

const printed: string[] = [];
const original = { warn: console.warn, error: console.error, log: console.log };

beforeEach(() => {
  printed.length = 0;
  for (const level of ['warn', 'error', 'log'] as const) {
    console[level] = (...args: unknown[]) => {
      printed.push(`console.${level}: ${args.map(String).join(' ').slice(0, 500)}`);
    };
  }
});

afterEach(() => {
  console.warn = original.warn;
  console.error = original.error;
  console.log = original.log;
  expect(printed, 'the code under test printed to the console').toEqual([]);
});
