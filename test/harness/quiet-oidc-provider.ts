/**
 * oidc-provider announces, on the console, every development-only shortcut the test provider takes
 * on purpose (in-memory adapter, generated signing keys, devInteractions, default helper functions)
 * and that Node 20 is not its supported runtime (it runs the tests fine; README, "Quick start").
 * Those expected notices are dropped so the test output shows what a reader needs; any other
 * oidc-provider notice still prints. Imported before oidc-provider, whose import prints one.
 */
// The notice may start with a colour code when the output is a terminal.
const EXPECTED = new RegExp(
  '^(\x1b\\[[\\d;]*m)?oidc-provider (NOTICE|WARNING): ' +
    '(a quick start development-only|quick start development-only|Unsupported runtime' +
    '|default [\\w.]+ function called)',
);

for (const method of ['info', 'warn'] as const) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && EXPECTED.test(args[0])) return;
    original(...args);
  };
}
