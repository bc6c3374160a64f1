/** vitest globalSetup of the HTTP projects: one shared host per project (node or edge). */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startTestHost, type HostKind } from './hosts.js';

declare module 'vitest' {
  export interface ProvidedContext {
    hostKind: HostKind;
    baseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const kind = project.name === 'http-edge' ? 'edge' : 'node';
  // The console's bundle is generated (gitignored): built fresh, so the suites test the sources.
  // TEST_CONSOLE_BUILT=1: the caller built it already (.ci/run, before running both projects at once:
  // one project's build must not rewrite the files the other's host is serving).
  if (process.env.TEST_CONSOLE_BUILT !== '1')
    execFileSync(process.execPath, ['scripts/build-console.mjs'], {
      cwd: resolve(import.meta.dirname, '../..'),
      stdio: 'ignore',
    });
  const host = await startTestHost(kind);
  project.provide('hostKind', kind);
  project.provide('baseUrl', host.url);
  return async () => {
    await host.stop();
  };
}
