// The error-tracking page (worker/src/errtrack/page.ts): fetches client-config at load, initialises
// @sentry/browser (window.Sentry, served from vendor/sentry) when error tracking is on, and shows the
// effective DSN on Ctrl+Shift+I. Nothing is sent anywhere while client-config answers {"sentry": null}.
(function () {
  'use strict';
  var root = document.body.getAttribute('data-root') || '';
  var status = document.getElementById('errtrack-status');
  var dialog = document.getElementById('errtrack-dialog');
  var dsnOut = document.getElementById('errtrack-dsn');
  var routeOut = document.getElementById('errtrack-route');
  var testButton = document.getElementById('errtrack-test');
  var state = { dsn: null, route: 'nowhere (error tracking off)' };

  function showDialog() {
    dsnOut.textContent = state.dsn || 'error tracking off';
    routeOut.textContent = state.route;
    if (!dialog.open) dialog.showModal();
  }

  // Ctrl+Shift+I, as the specification's web-interface note says. Some browsers keep this
  // combination for their developer tools; the button does the same.
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey && e.shiftKey && !e.altKey && !e.metaKey && (e.code === 'KeyI' || e.key === 'I' || e.key === 'i')) {
      e.preventDefault();
      showDialog();
    }
  }, true);
  document.getElementById('errtrack-show-dsn').addEventListener('click', showDialog);

  testButton.addEventListener('click', function () {
    // An uncaught error, so the SDK's global handler captures it as any page error would be.
    setTimeout(function () {
      throw new Error('Test error from the error-tracking page at ' + new Date().toISOString());
    }, 0);
  });

  function init(sentry) {
    var S = window.Sentry;
    if (!S || typeof S.init !== 'function') throw new Error('the Sentry SDK bundle did not load');
    var integrations = [];
    if (S.browserTracingIntegration) integrations.push(S.browserTracingIntegration());
    if (S.replayIntegration) integrations.push(S.replayIntegration());
    if (S.browserProfilingIntegration && typeof sentry.profileSessionSampleRate === 'number') integrations.push(S.browserProfilingIntegration());
    var options = {
      dsn: sentry.dsn,
      environment: sentry.environment,
      tracesSampleRate: sentry.tracesSampleRate,
      replaysSessionSampleRate: sentry.replaysSessionSampleRate,
      replaysOnErrorSampleRate: sentry.replaysOnErrorSampleRate,
      integrations: integrations,
    };
    if (sentry.tunnel) options.tunnel = sentry.tunnel;
    if (typeof sentry.profileSessionSampleRate === 'number') {
      // PROFILE: profile while traced spans run, where the browser has the JS Self-Profiling API.
      options.profileSessionSampleRate = sentry.profileSessionSampleRate;
      options.profileLifecycle = 'trace';
    }
    S.init(options);
  }

  fetch(root + '/v3/client-config', { headers: { Accept: 'application/json' } })
    .then(function (res) {
      if (!res.ok) throw new Error('client-config answered ' + res.status);
      return res.json();
    })
    .then(function (config) {
      var sentry = config && config.sentry;
      if (!sentry) {
        status.textContent = 'Error tracking is off: nothing is sent.';
        document.documentElement.setAttribute('data-errtrack', 'off');
        return;
      }
      init(sentry);
      state.dsn = sentry.dsn;
      state.route = sentry.tunnel ? 'through the service (' + sentry.tunnel + ')' : 'directly to the error-tracking system';
      status.textContent = 'Error tracking is on (' + sentry.environment + '); events go ' + state.route + '.';
      testButton.disabled = false;
      document.documentElement.setAttribute('data-errtrack', sentry.tunnel ? 'tunnel' : 'direct');
    })
    .catch(function (err) {
      status.textContent = 'Error tracking is off: ' + err.message;
      document.documentElement.setAttribute('data-errtrack', 'error');
    });
})();
