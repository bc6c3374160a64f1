/**
 * A vitest reporter that names every test that passed or failed only after a second run (`retry` in CI,
 * vitest.config.ts): `RETRIED <project> <file> > <test> (<runs>)` and the first run's error, which .ci/run prints
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
    const result = test.result();
    process.stdout.write(
      `RETRIED ${test.project.name} ${file} > ${test.fullName} (${retries + 1} runs, ${result.state})\n`,
    );
    // What the first run failed on (vitest keeps it, but does not print it for a test that passed in the end).
    const first = 'errors' in result ? result.errors?.[0] : undefined;
    if (first) {
      const text = (first.stack ?? `${first.name}: ${first.message}`).split('\n').slice(0, 15).join('\n');
      process.stdout.write(`${text.replace(/^/gm, 'RETRIED   ')}\n`);
    }
  }
}
