// Runs every benchmark in bench/ one after another (npm run bench); each prints its own JSON.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

for (const file of readdirSync(new URL('../bench/', import.meta.url))
  .filter((f) => f.endsWith('.bench.ts'))
  .sort()) {
  console.log(`== bench/${file}`);
  execFileSync('npx', ['tsx', `bench/${file}`], { stdio: 'inherit' });
}
