import { describe, expect, it } from 'vitest';
import { ANYONE, accessDeclaration, adminOnly, describeAccess, protectedRoute } from './protected-route.js';
import { superAccess } from './roles.js';

describe('protectedRoute', () => {
  it('derives security, middleware, roles and the super-access extensions from one declaration', () => {
    const d = accessDeclaration(adminOnly(superAccess.unprivilegedTargets('block')));
    expect(d.security).toEqual([{ cookie: [] }, { basic: [] }, { bearer: [] }]);
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
    expect(() => accessDeclaration({ ...ANYONE, superAccess: superAccess.allowed })).toThrow(TypeError);
    expect(() => accessDeclaration({ schemes: [], roles: ['user'] })).toThrow(TypeError);
    expect(() => accessDeclaration({ schemes: ['Basic'], roles: [] })).toThrow(TypeError);
  });

  it('states the rule in the first paragraph of the description', () => {
    expect(describeAccess(ANYONE)).toBe('Session cookie, Basic or Bearer. Any role.');
    expect(describeAccess(adminOnly(superAccess.refused('x')))).toBe(
      'Session cookie, Basic or Bearer. Admin only. Super-access: refused (403).',
    );
    const auditors = {
      schemes: ['Bearer'] as const,
      roles: ['admin', 'auditor'] as const,
      superAccess: superAccess.allowed,
    };
    expect(describeAccess(auditors)).toBe('Bearer. Roles: admin, auditor. Super-access: allowed.');
    const route = protectedRoute(ANYONE, {
      method: 'get',
      operationId: 'readX',
      path: '/x',
      description: 'More.',
      responses: { 204: { description: 'none' } },
    });
    expect(route.description).toBe('Session cookie, Basic or Bearer. Any role.\n\nMore.');
  });
});
