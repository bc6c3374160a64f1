import { defineConfig } from 'vitest/config';

const http = (host: 'node' | 'edge') => ({
  test: {
    name: `http-${host}`,
    include: ['test/http/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    // Room for a browser test's one new navigation after a stalled one (test/harness/console.ts, openPage).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // In CI (.ci/run: both HTTP projects at once on a CPU-bound machine), a failed test runs once more;
    // .ci/run prints every test that needed it at the end of its output (docs/testing.md, "Speed, and a
    // loaded machine"). A failure that repeats still fails the run.
    retry: process.env.CI === 'true' ? 1 : 0,
    // One host per project; files share it, so run them one after another. Projects of one vitest
    // run share its workers (one on a 2-core machine): .ci/run runs the two HTTP projects as two
    // processes at once (docs/architecture.md, "Testing").
    fileParallelism: false,
    // The files share one worker's module cache (the harness, playwright, the libSQL client): each
    // file's host is its own, and no file patches globals or mocks modules; VITEST_ISOLATE=1 imports
    // everything again per file, as vitest does by default (docs/testing.md, "Speed, and a loaded machine").
    isolate: process.env.VITEST_ISOLATE === '1',
  },
});

export default defineConfig({
  test: {
    // The default output, and a line for each test that needed a second run (test/harness/retried-reporter.ts).
    reporters: ['default', './test/harness/retried-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'worker/**/*.test.ts',
            'schema/**/*.test.ts',
            'scripts/**/*.test.ts',
            'ldap-bridge/**/*.test.ts',
            'test/unit/**/*.test.ts',
          ],
          environment: 'node',
          testTimeout: 30_000,
          // One module cache for every file, as in the HTTP projects below: 241 s instead of 378.
          isolate: process.env.VITEST_ISOLATE === '1',
        },
      },
      http('node'),
      http('edge'),
    ],
  },
});
