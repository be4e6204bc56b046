#!/usr/bin/env node
// Entry point of the `snotra` command: loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';
import { fileURLToPath } from 'node:url';

register();
const main = fileURLToPath(new URL('../surfaces/cli/main.ts', import.meta.url));
await import(main);
