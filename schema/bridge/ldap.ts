/**
 * The bridge's LDAP API (architecture.md §1): the contract both sides parse. The worker sends the
 * directory's connection settings with every call (the bridge holds no data), including the service
 * account's password, decrypted only for that call; everything travels over mutual TLS.
 *
 * Failures of the directory are not outcomes: the bridge answers them as problem+json with
 * 502 (unreachable, TLS refused, protocol error) or 504 (connect or search timeout), which the worker
 * passes on, and which never count as a wrong password.
 */
import { z } from 'zod';

/** How to reach and search one directory (from the worker's LDAP server record). */
export const LdapConnectionSchema = /* @__PURE__ */ (() =>
  z.object({
    /** One or more `ldap://` / `ldaps://` URLs, tried in order until one connects. */
    urls: z
      .array(z.string().regex(/^ldaps?:\/\/[^\s/]+\/?$/i, 'an ldap:// or ldaps:// URL without a path'))
      .min(1)
      .max(8),
    /** Upgrade `ldap://` connections with StartTLS before any bind. */
    startTls: z.boolean(),
    /** PEM CA certificate(s) that verify the directory's TLS certificate; null: the system's roots. */
    caCert: z.string().max(65_536).nullable(),
    /** The service account that finds users' entries; null: anonymous search. */
    bindDn: z.string().max(1024).nullable(),
    bindPassword: z.string().max(1024).nullable(),
    baseDn: z.string().min(1).max(1024),
    /**
     * The search filter with `{login}` where the (RFC 4515–escaped) login goes, e.g. `(uid={login})`.
     * null: `(uid={login})`, or on Active Directory `(|(sAMAccountName={login})(userPrincipalName={login}))`.
     */
    userFilter: z.string().min(3).max(1024).includes('{login}', { message: 'must contain {login}' }).nullable(),
    /** Attributes mapped to the local profile; null: not mapped. */
    attributes: z.object({
      displayName: z.string().max(128).nullable(),
      email: z.string().max(128).nullable(),
      /** An attribute whose value (admin, auditor, user) or group DN list (memberOf) sets the role. */
      role: z.string().max(128).nullable(),
    }),
    /** Group DNs that map to roles when `attributes.role` holds DNs (memberOf style). */
    roleGroups: z.object({ admin: z.string().max(1024).nullable(), auditor: z.string().max(1024).nullable() }),
    /**
     * How to read the user's groups after a successful bind (absent: none, as before groups existed):
     * `memberOf`, the group DNs in the user's attribute `attr` (named by their first RDN's value);
     * `search`, the entries under `baseDn` matching `filter` with {dn} replaced by the user's DN
     * (RFC 4515–escaped), named by their attribute `nameAttr`.
     */
    groups: z
      .discriminatedUnion('mode', [
        z.object({ mode: z.literal('none') }),
        z.object({
          mode: z.enum(['memberOf', 'search']),
          attr: z.string().max(128),
          baseDn: z.string().min(1).max(1024),
          filter: z.string().min(3).max(1024).includes('{dn}', { message: 'must contain {dn}' }),
          nameAttr: z.string().max(128),
        }),
      ])
      .optional(),
    /** DIRECTORY_SIGNATURE: the capability OID in the root DSE's supportedCapabilities that means Active Directory. */
    directorySignature: z.string().max(256),
    /** LDAP_SERVER_CONNECT_TIMEOUT and LDAP_SERVER_SEARCHING_TIMEOUT, in milliseconds. */
    connectTimeoutMs: z.number().int().min(100).max(600_000),
    searchTimeoutMs: z.number().int().min(100).max(600_000),
  }))();
export type LdapConnection = z.infer<typeof LdapConnectionSchema>;

/** POST /v1/ldap/authenticate: find the user's entry with the service account, then bind as the user. */
export const LdapAuthenticateRequestSchema = /* @__PURE__ */ (() =>
  z.object({
    connection: LdapConnectionSchema,
    login: z.string().min(1).max(256),
    /** Never empty or whitespace-only: such a bind would be an anonymous (unauthenticated) bind. */
    password: z
      .string()
      .max(1024)
      .refine((p) => p.trim() !== '', 'an empty or whitespace-only password is refused before any bind'),
  }))();
export type LdapAuthenticateRequest = z.infer<typeof LdapAuthenticateRequestSchema>;

/** The profile read from the user's entry. */
export const LdapProfileSchema = z.object({
  dn: z.string(),
  /** The login as the directory spells it (the value of the login attribute). */
  login: z.string(),
  /** A stable identifier: entryUUID, objectGUID (AD), else the DN. */
  externalId: z.string(),
  displayName: z.string().nullable(),
  email: z.string().nullable(),
  role: z.enum(['admin', 'auditor', 'user']).nullable(),
  /** The names of the user's groups (connection.groups); absent when none are read. */
  groups: z.array(z.string()).optional(),
});
export type LdapProfile = z.infer<typeof LdapProfileSchema>;

/**
 * Why a directory refuses an account whose password is right: Active Directory's bind sub-codes
 * (533 disabled, 701 account expired, 530 logon hours, 531 workstation) or, where the bind
 * succeeds, userAccountControl (ACCOUNTDISABLE: account-disabled, LOCKOUT: locked-out).
 */
export const LdapRefusalReasonSchema = z.enum([
  'account-disabled',
  'locked-out',
  'account-expired',
  'logon-hours',
  'workstation',
]);
export type LdapRefusalReason = z.infer<typeof LdapRefusalReasonSchema>;

export const LdapAuthenticateResponseSchema = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('ok'), activeDirectory: z.boolean(), profile: LdapProfileSchema }),
  /** No entry matched, several did, or the user's bind was refused: the same answer for all. */
  z.object({ outcome: z.literal('invalid-credentials') }),
  /** The entry exists and the password is right, but the directory refuses the account. */
  z.object({ outcome: z.literal('disabled'), reason: LdapRefusalReasonSchema.optional() }),
  /** The password is right but expired (AD 532) or must be changed (AD 773), in the directory. */
  z.object({ outcome: z.literal('password-expired'), reason: z.enum(['password-expired', 'must-change']) }),
  /**
   * The directory has locked the account (AD 775) and refuses it before checking the password:
   * nothing is known about the password.
   */
  z.object({ outcome: z.literal('locked-out') }),
]);
export type LdapAuthenticateResponse = z.infer<typeof LdapAuthenticateResponseSchema>;

/**
 * POST /v1/ldap/groups: the groups of known users (the periodic refresh, docs/ldap.md, "Groups"):
 * each login is looked up with the user filter as the service account (no user bind), and its
 * groups read as at a login. `found: false`: no single entry matches the login any more.
 */
export const LdapGroupsRequestSchema = /* @__PURE__ */ (() =>
  z.object({
    connection: LdapConnectionSchema,
    logins: z.array(z.string().min(1).max(256)).min(1).max(100),
  }))();
export const LdapGroupsResponseSchema = z.object({
  results: z.array(
    z.discriminatedUnion('found', [
      z.object({ login: z.string(), found: z.literal(true), groups: z.array(z.string()) }),
      z.object({ login: z.string(), found: z.literal(false) }),
    ]),
  ),
});
export type LdapGroupsResponse = z.infer<typeof LdapGroupsResponseSchema>;

/** POST /v1/ldap/test: connect, bind with the service account, read the root DSE, check the base DN. */
export const LdapTestRequestSchema = /* @__PURE__ */ (() => z.object({ connection: LdapConnectionSchema }))();
export const LdapTestResponseSchema = z.object({
  ok: z.boolean(),
  /** The URL that answered. */
  url: z.string().nullable(),
  activeDirectory: z.boolean().nullable(),
  /** Each step with its result, e.g. connect, starttls, bind, rootDse, baseDn. */
  steps: z.array(z.object({ step: z.string(), ok: z.boolean(), detail: z.string().optional(), ms: z.number() })),
});
export type LdapTestResponse = z.infer<typeof LdapTestResponseSchema>;

/** The problem body of a bridge failure (502/504/400). `code` names the cause for the worker and the logs. */
export const BridgeProblemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.enum([
    'DIRECTORY_UNAVAILABLE',
    'DIRECTORY_TIMEOUT',
    'DIRECTORY_TLS',
    'DIRECTORY_ERROR',
    'UPSTREAM_UNAVAILABLE',
    'UPSTREAM_TIMEOUT',
    'UPSTREAM_TLS',
    'STORE_UNAVAILABLE',
    'STORE_TIMEOUT',
    'STORE_TLS',
    'LOGSTORE_URL_NOT_ALLOWED',
    'MAIL_UNAVAILABLE',
    'MAIL_TIMEOUT',
    'MAIL_TLS',
    'WEBHOOK_TARGET_REFUSED',
    'BAD_REQUEST',
    'INTERNAL',
  ]),
});
export type BridgeProblem = z.infer<typeof BridgeProblemSchema>;
