/**
 * A vitest reporter that names every test that passed or failed only after a second run (`retry` in CI,
 * vitest.config.ts): one line each, `RETRIED <project> <file> > <test> (<runs>)`, which .ci/run prints
 * again at the end of its output (docs/testing.md, "Speed, and a loaded machine"). The default reporter
 * shows a retry only beside a slow test.
 */
import { relative } from 'node:path';
import type { Reporter, TestCase } from 'vitest/node';

export default class RetriedReporter implements Reporter {
  onTestCaseResult(test: TestCase): void {
    const retries = test.diagnostic()?.retryCount ?? 0;
    if (retries === 0) return;
    const file = relative(process.cwd(), test.module.moduleId);
    const state = test.result().state;
    process.stdout.write(`RETRIED ${test.project.name} ${file} > ${test.fullName} (${retries + 1} runs, ${state})\n`);
  }
}
