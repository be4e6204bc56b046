/** Where the suite's globalSetup writes how the build of dist/ went (test/support/build-dist.ts). */
export const BUILD_STATUS_ENV = 'SNOTRA_TEST_BUILD_STATUS';

/** How the build of dist/ went, and where the child scripts were bundled (null: run through tsx). */
export interface BuildStatus {
  readonly dist: 'ok' | 'failed';
  readonly children: string | null;
}
