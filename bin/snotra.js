#!/usr/bin/env node
// Entry point of the `snotra` command: loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../surfaces/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
