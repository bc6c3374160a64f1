/** What the logs routes share: who may read the logs, the path parameter, validation problems. */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ANY_CREDENTIAL, type Access } from '../auth/protected-route.js';
import { superAccess } from '../auth/roles.js';
import type { AppEnv } from '../http/context.js';
import { ProblemError, type FieldError } from '../http/problem.js';
import { STREAMS, type StreamName } from './streams.js';

/**
 * Auditors and admins read the audit logs. Lent admin rights do not: the audit trail records what
 * super-access did, and its holder must not read (or export) it.
 */
export const READERS: Access = {
  schemes: ANY_CREDENTIAL,
  roles: ['admin', 'auditor'],
  superAccess: superAccess.refused('read the audit logs'),
  tokenScope: 'logs:read',
};

const TYPES = Object.keys(STREAMS).join(', ');

/** The path parameter; any other value than a log type is a 404 (checked before anything else). */
export const TypeParam = z.object({
  audit_log_type: z.string().openapi({
    param: { name: 'audit_log_type', in: 'path' },
    description: `the log type: ${TYPES} (GET /v3/logs/audit_log_types); anything else is 404`,
    example: 'user_activity',
  }),
});

/** The log type of a request whose path passed `knownStream`. */
export function streamOf(c: Context<AppEnv>): StreamName {
  return c.req.param('audit_log_type') as StreamName;
}

/** A 422 VALIDATION problem of the allow-list's refusals, each naming its key. */
export function refused(errors: FieldError[]): ProblemError {
  const detail = errors.map((e) => `${e.location}${e.path ? `.${e.path}` : ''}: ${e.message}`).join('; ');
  return new ProblemError('VALIDATION', { detail, extensions: { errors } });
}
