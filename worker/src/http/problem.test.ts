import { describe, expect, it } from 'vitest';
import { problemResponses } from './problem.js';

describe('problemResponses', () => {
  it('describes a status shared by several codes by its general meaning, not by the first code listed', () => {
    const r = problemResponses(400, 401, 403, 409, 413, 422, 503);
    expect(r[403].description).toBe('Forbidden');
    expect(r[422].description).toBe('Validation failed');
    expect(r[401].description).toBe('Authentication required');
    expect(r[413].description).toBe('Payload too large');
    expect(r[422].content['application/problem+json'].schema).toBeDefined();
  });
});
