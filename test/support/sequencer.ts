import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { LONG_FILES } from '../tiers.ts';

/**
 * vitest's order, except that the unit tier starts first and then the files known to take longest. On a fresh clone
 * vitest has no durations yet and starts larger files first, so a short file that runs for
 * minutes (the contract matrix is 61 lines) could start last and alone keep the run going.
 */
export default class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // The unit tier first: it runs while the globalSetup still compiles dist/ (the integration
    // files wait for that build), so the build's time is not the whole machine's.
    const rank = (s: TestSpecification) => {
      if (s.project.name === 'unit') return -1;
      const i = LONG_FILES.indexOf(relative(this.ctx.config.root, s.moduleId));
      return i === -1 ? LONG_FILES.length : i;
    };
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
