import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REGISTRY, VAR_NAMES } from '../worker/src/config/index.js';
import { renderConfigTable, withConfigTable } from './config-table.js';

describe('README configuration table', () => {
  it('is the one generated from the registry (run npm run docs:config after a change)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(withConfigTable(readme)).toBe(readme);
  });

  it('lists every variable with its environment name, and no secret default', () => {
    const table = renderConfigTable();
    for (const name of VAR_NAMES) expect(table).toContain(`| ${name} | \`${REGISTRY[name].env}\` |`);
  });
});
