// Writes docs/machines/<machine>.{mmd,svg} from the machine definitions (`npm run docs:machines`).
// With `--check` it writes nothing and exits 1 naming every diagram that is missing or differs
// (`npm run docs:machines -- --check`, for CI); test/viz/viz.test.ts checks the same.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { machineDocs } from '../runtime/viz/docs.ts';

const dir = new URL('../docs/machines/', import.meta.url).pathname;
const docs = await machineDocs();
if (process.argv.includes('--check')) {
  const stale = Object.entries(docs)
    .filter(([file, text]) => !existsSync(`${dir}${file}`) || readFileSync(`${dir}${file}`, 'utf8') !== text)
    .map(([file]) => `docs/machines/${file}`);
  if (stale.length > 0) {
    process.stderr.write(
      `out of date (run \`npm run docs:machines\` and commit them): ${stale.join(', ')}\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`docs/machines: ${Object.keys(docs).length} diagrams current\n`);
} else {
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(docs)) writeFileSync(`${dir}${file}`, text);
}
