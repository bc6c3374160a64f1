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
