/**
 * Browser error tracking, one implementation for every page of the service (the console and the
 * error-tracking page): fetches client-config, initialises @sentry/browser (window.Sentry, served
 * from STATIC_DIR/vendor/sentry, never a CDN) when `sentry` is not null, and shows the effective DSN
 * in the page's #errtrack-dialog on Ctrl+Shift+I. Nothing is sent while client-config says off.
 */

/** client-config's `sentry` (worker/src/errtrack/client-config.ts). */
export interface SentryConfig {
  dsn: string;
  environment: string;
  tracesSampleRate: number;
  replaysSessionSampleRate: number;
  replaysOnErrorSampleRate: number;
  tunnel: string | null;
  profileSessionSampleRate?: number;
}

/** What the page knows once client-config has answered. */
export type ErrtrackState =
  | { mode: 'off' }
  | { mode: 'error'; message: string }
  | { mode: 'tunnel' | 'direct'; config: SentryConfig };

type SentryApi = {
  init(options: Record<string, unknown>): void;
  browserTracingIntegration?: () => unknown;
  replayIntegration?: () => unknown;
  browserProfilingIntegration?: () => unknown;
};

/** Texts of the route line (the console translates them). */
export interface RouteTexts {
  tunnel: (path: string) => string;
  direct: string;
}

let current: ErrtrackState | null = null;

function initSentry(sentry: SentryConfig): void {
  const S = (window as unknown as { Sentry?: SentryApi }).Sentry;
  if (!S || typeof S.init !== 'function') throw new Error('the Sentry SDK bundle did not load');
  const integrations: unknown[] = [];
  if (S.browserTracingIntegration) integrations.push(S.browserTracingIntegration());
  if (S.replayIntegration) integrations.push(S.replayIntegration());
  const profiling = typeof sentry.profileSessionSampleRate === 'number';
  if (S.browserProfilingIntegration && profiling) integrations.push(S.browserProfilingIntegration());
  const options: Record<string, unknown> = {
    dsn: sentry.dsn,
    environment: sentry.environment,
    tracesSampleRate: sentry.tracesSampleRate,
    replaysSessionSampleRate: sentry.replaysSessionSampleRate,
    replaysOnErrorSampleRate: sentry.replaysOnErrorSampleRate,
    integrations,
  };
  if (sentry.tunnel) options.tunnel = sentry.tunnel;
  if (profiling) {
    // PROFILE: profile while traced spans run, where the browser has the JS Self-Profiling API.
    options.profileSessionSampleRate = sentry.profileSessionSampleRate;
    options.profileLifecycle = 'trace';
  }
  S.init(options);
}

/** Fetches client-config and initialises the SDK accordingly; marks `<html data-errtrack>`. */
export async function startErrorTracking(root: string): Promise<ErrtrackState> {
  let state: ErrtrackState;
  try {
    const res = await fetch(`${root}/v3/client-config`, { headers: { Accept: 'application/json' } });
    if (!res.ok) throw new Error(`client-config answered ${res.status}`);
    const config = (await res.json()) as { sentry?: SentryConfig | null };
    const sentry = config?.sentry;
    if (!sentry) state = { mode: 'off' };
    else {
      initSentry(sentry);
      state = { mode: sentry.tunnel ? 'tunnel' : 'direct', config: sentry };
    }
  } catch (err) {
    state = { mode: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  current = state;
  document.documentElement.setAttribute('data-errtrack', state.mode);
  return state;
}

/** Where events go, in words. */
export function routeOf(state: ErrtrackState | null, texts: RouteTexts, nowhere: string): string {
  if (!state || (state.mode !== 'tunnel' && state.mode !== 'direct')) return nowhere;
  return state.config.tunnel ? texts.tunnel(state.config.tunnel) : texts.direct;
}

/** Opens #errtrack-dialog with the effective DSN and route. */
export function showDsnDialog(texts: RouteTexts): void {
  const dialog = document.getElementById('errtrack-dialog') as HTMLDialogElement | null;
  if (!dialog) return;
  const off = dialog.dataset.off ?? 'error tracking off';
  const nowhere = dialog.dataset.nowhere ?? 'nowhere';
  const dsn = current && (current.mode === 'tunnel' || current.mode === 'direct') ? current.config.dsn : off;
  const dsnOut = document.getElementById('errtrack-dsn');
  const routeOut = document.getElementById('errtrack-route');
  if (dsnOut) dsnOut.textContent = dsn;
  if (routeOut) routeOut.textContent = routeOf(current, texts, nowhere);
  if (!dialog.open) dialog.showModal();
}

/**
 * Ctrl+Shift+I opens the dialog, as the specification's web-interface note says. Some browsers keep
 * this combination for their developer tools; the pages also offer a button or link that does the same.
 */
export function installDsnShortcut(texts: RouteTexts): void {
  document.addEventListener(
    'keydown',
    (e) => {
      if (e.ctrlKey && e.shiftKey && !e.altKey && !e.metaKey && (e.code === 'KeyI' || e.key === 'I' || e.key === 'i')) {
        e.preventDefault();
        showDsnDialog(texts);
      }
    },
    true,
  );
}
