// Starts Swagger UI from the locally served bundle (no CDN). Kept in a file, not inline, so the
// docs page can run under a Content-Security-Policy of script-src 'self'.
(function () {
  var el = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: el.getAttribute('data-spec-url'),
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: false,
    withCredentials: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
})();
