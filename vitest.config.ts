import { defineConfig } from 'vitest/config';

const http = (host: 'node' | 'edge') => ({
  test: {
    name: `http-${host}`,
    include: ['test/http/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // One host per project; files share it, so run them one after another.
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
