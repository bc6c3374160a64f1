/**
 * The error-tracking page (worker/src/errtrack/page-routes.ts): the shared error-tracking module,
 * a status line and a test error.
 */
import { installDsnShortcut, routeOf, showDsnDialog, startErrorTracking } from './errtrack.js';

const texts = {
  tunnel: (path: string) => `through the service (${path})`,
  direct: 'directly to the error-tracking system',
};
const root = document.body.getAttribute('data-root') ?? '';
const status = document.getElementById('errtrack-status')!;
const testButton = document.getElementById('errtrack-test') as HTMLButtonElement;

installDsnShortcut(texts);
document.getElementById('errtrack-show-dsn')?.addEventListener('click', () => showDsnDialog(texts));
testButton.addEventListener('click', () => {
  // An uncaught error, so the SDK's global handler captures it as any page error would be.
  setTimeout(() => {
    throw new Error(`Test error from the error-tracking page at ${new Date().toISOString()}`);
  }, 0);
});

void startErrorTracking(root).then((state) => {
  if (state.mode === 'off') status.textContent = 'Error tracking is off: nothing is sent.';
  else if (state.mode === 'error') status.textContent = `Error tracking is off: ${state.message}`;
  else {
    status.textContent = `Error tracking is on (${state.config.environment}); events go ${routeOf(state, texts, '')}.`;
    testButton.disabled = false;
  }
});
