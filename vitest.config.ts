import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['worker/**/*.test.ts', 'schema/**/*.test.ts', 'scripts/**/*.test.ts', 'ldap-bridge/**/*.test.ts'],
          environment: 'node',
        },
      },
    ],
  },
});
