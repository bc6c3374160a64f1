import { defineConfig } from 'vitest/config';

const http = (host: 'node' | 'edge') => ({
  test: {
    name: `http-${host}`,
    include: ['test/http/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    // Room for a browser test's one new navigation after a stalled one (test/harness/console.ts, openPage).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One host per project; files share it, so run them one after another. Projects of one vitest
    // run share its workers (one on a 2-core machine): .ci/run runs the two HTTP projects as two
    // processes at once (docs/architecture.md, "Testing").
    fileParallelism: false,
  },
});

export default defineConfig({
  test: {
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
        },
      },
      http('node'),
      http('edge'),
    ],
  },
});
