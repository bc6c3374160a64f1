/** The browser error-tracking configuration (specification, Endpoints rule 3; architecture.md §4). */
import { z } from '@hono/zod-openapi';
import type { ConfigSnapshot } from '../config/index.js';

export const SentryConfigSchema = z
  .object({
    dsn: z.string().openapi({ description: 'FRONTEND_ERRTRACK_DSN' }),
    environment: z.string().openapi({ description: 'ERRTRACK_ENV' }),
    tracesSampleRate: z.number().min(0).max(1),
    replaysSessionSampleRate: z.number().min(0).max(1),
    replaysOnErrorSampleRate: z.number().min(0).max(1),
    tunnel: z
      .string()
      .nullable()
      .openapi({ description: 'path of sentry-tunnel when FRONTEND_ERRTRACK_TUNNEL, else null (Direct mode)' }),
    profileSessionSampleRate: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .openapi({
        description:
          'present (1.0: every page session) only while PROFILE is True: browsers with the JS Self-Profiling API ' +
          '(Chromium) then profile while traces run',
      }),
  })
  .openapi('SentryConfig');

export const ClientConfigSchema = z
  .object({
    sentry: SentryConfigSchema.nullable().openapi({ description: 'null: error tracking is off in the browser' }),
  })
  .openapi('ClientConfig');

export type ClientConfig = z.infer<typeof ClientConfigSchema>;

/**
 * Off while FRONTEND_ERRTRACK_DSN is unset, and also while ERRTRACK_ENV is empty (no events at all
 * are sent then, by the specification); Direct without the tunnel; Tunnel with it.
 */
export function clientConfig(config: ConfigSnapshot, tunnelPath: string, profile = false): ClientConfig {
  const dsn = config.get('FRONTEND_ERRTRACK_DSN');
  const environment = config.get('ERRTRACK_ENV');
  if (dsn === '' || environment === '') return { sentry: null };
  return {
    sentry: {
      dsn,
      environment,
      tracesSampleRate: config.get('FRONTEND_ERRTRACK_TRACES_SAMPLE_RATE'),
      replaysSessionSampleRate: config.get('FRONTEND_ERRTRACK_REPLAYS_SAMPLE_RATE'),
      replaysOnErrorSampleRate: 1.0,
      tunnel: config.get('FRONTEND_ERRTRACK_TUNNEL') ? tunnelPath : null,
      ...(profile ? { profileSessionSampleRate: 1.0 } : {}),
    },
  };
}
