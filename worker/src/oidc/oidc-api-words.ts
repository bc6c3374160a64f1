/**
 * The words of /v3/settings/identity-providers in the API description (admin-routes.ts): their summaries and
 * descriptions. The document is generated at build time on the Node host (architecture.md §10), so the edge script
 * needs none of them: wrangler.toml's [alias] replaces this module there with worker/edge-aliases/oidc-api-words.js
 * (empty strings), as for the webhooks' words (docs/performance.md, "The edge bundle").
 */
import { SEALING_UNAVAILABLE } from '../store/secret-box.js';

const PATCH_DESCRIPTION =
  'Omitted fields keep their values. A new `issuer` needs `clientSecret` in the same request (the stored secret is ' +
  'sent to the issuer): otherwise 422 naming clientSecret, and nothing changes.';
const RELINK_DESCRIPTION =
  'OIDC identities are keyed by record, issuer and subject (a `sub` is unique per issuer only). A new `issuer` ' +
  'therefore leaves the identities linked under the old one behind: their accounts no longer log in through ' +
  'this record (a local account that had linked one is offered the merge again, with its password; an account ' +
  'created by an OIDC login must be re-linked or deleted by an admin). With `relinkIdentities: true` they move ' +
  'to the new issuer in the same transaction. 409 when a moved identity is already linked under the new issuer ' +
  '(nothing changes).';

export const W: Record<string, string> = {
  d1: 'the issuer; its /.well-known/openid-configuration is used',
  d2: 'stored encrypted; never returned',
  d3:
    'a claim (ID token, else userinfo) listing the group names of the user, read at each login ' +
    '(docs/groups.md); null: no groups are read',
  d4:
    'true: an ID token whose `amr` names a multi-factor method (RFC 8176: mfa, otp, hwk, swk, sc, ...) or whose ' +
    '`acr` is in acceptedAcr counts as a second factor; false: an account with a local factor is asked for it ' +
    '(docs/security-mfa.md)',
  d5: '`acr` values that count as multi-factor when trustMfaClaims is true',
  d6:
    'with a new `issuer` only. true: the identities linked through this record under the old issuer move to ' +
    'the new one (you confirm that its subjects are the same people, e.g. the provider moved to another ' +
    'URL). Absent or false: they stay under the old issuer and log in no more.',
  d7: 'when the issuer changed: how many linked identities moved to it',
  s8: 'OIDC identity providers',
  d9: 'Client secrets are never returned.',
  s10: 'Add an OIDC identity provider',
  s11: 'Read an OIDC identity provider',
  d12: 'Client secrets are never returned.',
  s13: 'Change an OIDC identity provider',
  s14: 'Remove an OIDC identity provider',
  create: `409 when the name is taken. ${SEALING_UNAVAILABLE}`,
  patch: `${PATCH_DESCRIPTION} ${SEALING_UNAVAILABLE}\n\n${RELINK_DESCRIPTION}`,
};
