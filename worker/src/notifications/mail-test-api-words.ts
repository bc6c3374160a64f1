/**
 * The words of /v3/settings/mail/test in the API description (mail-test-routes.ts): their summaries and
 * descriptions. The document is generated at build time on the Node host (architecture.md §10), so the edge script
 * needs none of them: wrangler.toml's [alias] replaces this module there with
 * worker/edge-aliases/mail-test-api-words.js (empty strings), as for the webhooks' words (docs/performance.md, "The
 * edge bundle").
 */
export const W: Record<string, string> = {
  d1: "the recipient; default: the caller's e-mail address",
  d2: 'unsaved Mail settings to try instead of those in force (the others stay as they are); nothing is saved',
  d3:
    'sent: the server accepted the message; refused: the server answered a refusal (responseCode); failed: ' +
    'no answer (refused or dropped connection, timeout, TLS not offered or not verified); outbox: no mail ' +
    'server is configured and the Node host wrote the mail to its development outbox (file); ' +
    'not_configured: nothing was attempted (detail says why)',
  d4: 'host:port tried (null when none was)',
  d5:
    'the SMTP stage reached: connect (and the greeting), tls, auth, mail_from, rcpt, data (sent: the reply ' +
    'to the message); null when nothing was attempted',
  d6: "the server's reply code, if it answered",
  d7: "the server's reply text, or why there was none",
  d8: 'outbox: the file written',
  d9:
    'One real attempt with the Mail settings in force, or with unsaved `values` (nothing is saved), to `to` ' +
    "(default: the caller's address), over a connection of its own; the answer says the SMTP stage reached and " +
    "the server's reply code and text, never the password. The password follows the rule of a settings write: " +
    'with a user and a password set, a host, port or EMAIL_USE_TLS off given here needs EMAIL_HOST_PASSWORD too ' +
    '(422 naming it). While EMAIL_HOST is the placeholder the Node host writes the mail to its development ' +
    'outbox (outcome outbox, file); the edge answers not_configured.',
};
