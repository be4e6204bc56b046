// One process of a model-based restart case, for the SIGKILL subset:
//   node --import tsx test/model-based/run-restart-child.ts <dir> kill <scenario> <crashAt>
//     runs the scenario and kills itself with SIGKILL at that await point of its effects;
//   node --import tsx test/model-based/run-restart-child.ts <dir> resume <scenario> <crashAt>
//     a fresh process: restores the run from the store, finishes it, prints `done <status>`.
import { RestartHarness } from './harness.ts';
import { scenarios } from './run-scenarios.ts';

const [dir, mode, name, crashAt] = process.argv.slice(2) as [string, 'kill' | 'resume', string, string];
const scenario = scenarios().find((s) => s.name === name);
if (scenario === undefined) throw new Error(`no scenario ${JSON.stringify(name)}`);
const h = await RestartHarness.create(undefined, dir);
const r = await h.run(scenario, `${name}:kill${crashAt}`, mode === 'kill' ? Number(crashAt) : null, {
  kill: mode === 'kill',
  resume: mode === 'resume',
});
process.stdout.write(`done ${r.outcome.status}\n`);
h.close();
process.exit(0);
