// Writes docs/machines/<machine>.{mmd,svg} from the machine definitions (`npm run docs:machines`).
// test/viz/docs-current.test.ts fails when a committed diagram differs from what this writes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { machineDocs } from '../runtime/viz/docs.ts';

const dir = new URL('../docs/machines/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
for (const [file, text] of Object.entries(await machineDocs())) writeFileSync(`${dir}${file}`, text);
