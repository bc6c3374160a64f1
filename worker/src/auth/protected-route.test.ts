import { describe, expect, it } from 'vitest';
import { ANYONE, accessDeclaration, adminOnly, describeAccess, protectedRoute } from './protected-route.js';
import { superAccess } from './roles.js';

describe('protectedRoute', () => {
  it('derives security, middleware, roles and the super-access extensions from one declaration', () => {
    const d = accessDeclaration(adminOnly(superAccess.unprivilegedTargets('block'), 'users:write'));
    expect(d.security).toEqual([{ cookie: [] }, { basic: [] }, { bearer: ['users:write'] }]);
    expect(d['x-token-scope']).toBe('users:write');
    expect(d['x-required-roles']).toEqual(['admin']);
    expect(d['x-super-access']).toBe(true);
    expect(d['x-super-access-target']).toBe('unprivileged');
    // authenticate, then the role check with the super-access rule
    expect(d.middleware).toHaveLength(2);
  });

  it('runs no role check for routes open to every role, and declares no super-access there', () => {
    const d = accessDeclaration({ schemes: ['Basic'], roles: ['admin', 'auditor', 'user'] });
    expect(d.security).toEqual([{ basic: [] }]);
    expect(d.middleware).toHaveLength(1);
    expect(d).not.toHaveProperty('x-super-access');
  });

  it('refuses declarations that leave the super-access rule open or name nothing', () => {
    expect(() => accessDeclaration({ schemes: ['Basic'], roles: ['admin'] })).toThrow(TypeError);
    expect(() => accessDeclaration({ schemes: ['Basic'], roles: ['admin', 'auditor'] })).toThrow(TypeError);
    expect(() =>
      accessDeclaration({ ...ANYONE, tokenScope: 'account:read', superAccess: superAccess.allowed }),
    ).toThrow(TypeError);
    expect(() => accessDeclaration({ schemes: [], roles: ['user'] })).toThrow(TypeError);
    expect(() => accessDeclaration({ schemes: ['Basic'], roles: [] })).toThrow(TypeError);
    // Bearer without the API token's scope, or a scope where no token is taken
    expect(() => accessDeclaration(ANYONE)).toThrow(TypeError);
    expect(() => accessDeclaration({ schemes: ['Basic'], roles: ['user'], tokenScope: 'account:read' })).toThrow(
      TypeError,
    );
  });

  it('states the rule in the first paragraph of the description', () => {
    const anyone = { ...ANYONE, tokenScope: 'account:read' } as const;
    expect(describeAccess(anyone)).toBe(
      'Session cookie, Basic or Bearer. Any role. An API token needs the scope account:read.',
    );
    expect(describeAccess(adminOnly(superAccess.refused('x'), 'none'))).toBe(
      'Session cookie, Basic or Bearer. Admin only. Not with an API token (tokens, second factors and passwords ' +
        'are managed with a session or Basic). Super-access: refused (403).',
    );
    const auditors = {
      schemes: ['Bearer'] as const,
      roles: ['admin', 'auditor'] as const,
      superAccess: superAccess.allowed,
      tokenScope: 'logs:read',
    } as const;
    expect(describeAccess(auditors)).toBe(
      'Bearer. Roles: admin, auditor. An API token needs the scope logs:read. Super-access: allowed.',
    );
    const route = protectedRoute(anyone, {
      method: 'get',
      operationId: 'readX',
      path: '/x',
      description: 'More.',
      responses: { 204: { description: 'none' } },
    });
    expect(route.description).toBe(
      'Session cookie, Basic or Bearer. Any role. An API token needs the scope account:read.\n\nMore.',
    );
  });
});
