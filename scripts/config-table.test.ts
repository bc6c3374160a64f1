import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REGISTRY, VAR_NAMES } from '../worker/src/config/index.js';
import { CONFIG_DOC, renderConfigTable, withConfigTable } from './config-table.js';

describe('the configuration table of docs/configuration.md', () => {
  it('is the one generated from the registry (run npm run docs:config after a change)', () => {
    const doc = readFileSync(CONFIG_DOC, 'utf8');
    expect(withConfigTable(doc)).toBe(doc);
  });

  it('lists every variable with its environment name, and no secret default', () => {
    const table = renderConfigTable();
    for (const name of VAR_NAMES) expect(table).toContain(`| ${name} | \`${REGISTRY[name].env}\` |`);
  });
});
