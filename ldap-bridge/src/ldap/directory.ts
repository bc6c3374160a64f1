/**
 * The bridge's LDAP operations (architecture.md §1, contract in schema/bridge/ldap.ts):
 *
 * - `POST /v1/ldap/authenticate`: bind as the service account (or anonymously), read the root DSE
 *   (Active Directory iff its supportedCapabilities lists `directorySignature`), find exactly one
 *   entry with `userFilter`, then bind as that entry with the user's password on a fresh connection.
 * - `POST /v1/ldap/test`: the same connection steps one by one, as a diagnostic (always 200).
 *
 * Directory failures are problems, never outcomes (they must not count as wrong passwords):
 * unreachable 502 DIRECTORY_UNAVAILABLE, TLS refused 502 DIRECTORY_TLS, too slow 504
 * DIRECTORY_TIMEOUT, anything else (service bind refused, unknown base DN, bad filter) 502
 * DIRECTORY_ERROR. Nothing here logs or answers a password.
 *
 * `userFilter` null selects the default: DEFAULT_USER_FILTER, or AD_USER_FILTER in Active Directory
 * mode. In AD mode the login reported is the sAMAccountName (the same local login whichever form
 * the user typed), externalId is objectGUID, and a refused user bind is answered by its sub-code
 * (./ad-bind.ts: disabled, expired, locked out...). Where the bind succeeds (a directory that only
 * looks like AD), userAccountControl ACCOUNTDISABLE/LOCKOUT answer `disabled`, checked after it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { FilterParser, ResultCodeError, type Entry } from 'ldapts';
import type {
  LdapAuthenticateResponse,
  LdapConnection,
  LdapGroupsResponse,
  LdapProfile,
  LdapTestResponse,
} from '../../../schema/bridge/index.js';
import { adBindOutcome } from './ad-bind.js';
import { groupFilterFor, guidString, normalizeDn, userFilterFor } from './escape.js';
import { classify, DirectoryError, openFirst, openSession, type Session, type StepRunner } from './session.js';

/** The filters used when `userFilter` is null (schema/bridge/ldap.ts). */
export const DEFAULT_USER_FILTER = '(uid={login})';
export const AD_USER_FILTER = '(|(sAMAccountName={login})(userPrincipalName={login}))';
/** userAccountControl flags (MS-ADTS 2.2.16). */
const UF_ACCOUNTDISABLE = 0x2;
const UF_LOCKOUT = 0x10;
/** LDAP result codes (RFC 4511 §4.1.9). */
const INVALID_CREDENTIALS = 49;
const NO_SUCH_OBJECT = 32;

/** Binds as the service account (anonymous: nothing to do); a refusal is a configuration problem. */
export async function bindService(s: Session, conn: LdapConnection): Promise<'anonymous' | 'service account'> {
  if (conn.bindDn === null || conn.bindDn === '') return 'anonymous';
  // An empty password would make this an unauthenticated bind (RFC 4513 §5.1.2), which succeeds.
  if (!conn.bindPassword) throw new DirectoryError('DIRECTORY_ERROR', 'the service account has no password');
  const { bindDn, bindPassword } = conn;
  try {
    await s.op('service bind', (c) => c.bind(bindDn, bindPassword));
  } catch (err) {
    if (err instanceof ResultCodeError) {
      throw new DirectoryError(
        'DIRECTORY_ERROR',
        err.code === INVALID_CREDENTIALS
          ? "the service account's bind was refused"
          : `the service account's bind failed (${err.name})`,
        { cause: err },
      );
    }
    throw err;
  }
  return 'service account';
}

/** Whether the root DSE lists the Active Directory signature; an unreadable root DSE is not AD. */
export async function detectActiveDirectory(s: Session, conn: LdapConnection): Promise<boolean> {
  try {
    const { searchEntries } = await s.op('root DSE', (c) =>
      c.search('', { scope: 'base', filter: '(objectClass=*)', attributes: ['supportedCapabilities'] }),
    );
    return values(searchEntries[0], 'supportedCapabilities').includes(conn.directorySignature);
  } catch (err) {
    if (err instanceof ResultCodeError) return false;
    throw err;
  }
}

// ---- entries -----------------------------------------------------------------------------------

/** The string values of `attr` in `entry` (attribute names compare case-insensitively). */
function values(entry: Entry | undefined, attr: string): string[] {
  if (!entry) return [];
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attr.toLowerCase());
  const v = key === undefined ? undefined : entry[key];
  const list = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return list.map((x) => (typeof x === 'string' ? x : x.toString('utf8'))).filter((x) => x !== '');
}

function buffer(entry: Entry, attr: string): Buffer | undefined {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attr.toLowerCase());
  const v = key === undefined ? undefined : entry[key];
  const first = Array.isArray(v) ? v[0] : v;
  return Buffer.isBuffer(first) ? first : undefined;
}

/** The attribute compared with `{login}` in a filter, e.g. `uid` in `(&(objectClass=person)(uid={login}))`. */
export function loginAttribute(filter: string): string | null {
  return /\(\s*([A-Za-z][\w-]*|\d+(?:\.\d+)+)(?:;[\w-]+)*\s*~?=\s*\{login\}\s*\)/.exec(filter)?.[1] ?? null;
}

/** admin / auditor / user from the role attribute: a role name, or group DNs matched to roleGroups. */
export function mapRole(
  roleValues: readonly string[],
  groups: LdapConnection['roleGroups'],
): 'admin' | 'auditor' | 'user' {
  const found = new Set<string>();
  const admin = groups.admin ? normalizeDn(groups.admin) : null;
  const auditor = groups.auditor ? normalizeDn(groups.auditor) : null;
  for (const v of roleValues) {
    if (v.includes('=')) {
      const dn = normalizeDn(v);
      if (dn === admin) found.add('admin');
      if (dn === auditor) found.add('auditor');
    } else {
      found.add(v.trim().toLowerCase());
    }
  }
  return found.has('admin') ? 'admin' : found.has('auditor') ? 'auditor' : 'user';
}

/** The profile of the user's entry (see LdapProfileSchema). */
export function toProfile(
  entry: Entry,
  conn: LdapConnection,
  o: { activeDirectory: boolean; loginAttr: string | null; login: string },
): LdapProfile {
  const first = (attr: string | null) => (attr ? (values(entry, attr)[0] ?? null) : null);
  const logins = o.loginAttr ? values(entry, o.loginAttr) : [];
  const login = logins.find((l) => l.toLowerCase() === o.login.toLowerCase()) ?? logins[0] ?? o.login;
  const guid = o.activeDirectory ? buffer(entry, 'objectGUID') : undefined;
  return {
    dn: entry.dn,
    login,
    externalId: guid?.length === 16 ? guidString(guid) : (first('entryUUID') ?? entry.dn),
    displayName: first(conn.attributes.displayName),
    email: first(conn.attributes.email),
    role: conn.attributes.role ? mapRole(values(entry, conn.attributes.role), conn.roleGroups) : null,
  };
}

// ---- the two operations ------------------------------------------------------------------------

/** The filter template in force: the configured one, else the default of the directory's kind. */
export function effectiveUserFilter(conn: LdapConnection, activeDirectory: boolean): string {
  return conn.userFilter ?? (activeDirectory ? AD_USER_FILTER : DEFAULT_USER_FILTER);
}

/** Checks a filter template: it must hold `{login}` and parse once filled in. */
export function checkUserFilter(template: string): void {
  if (!template.includes('{login}'))
    throw new DirectoryError('DIRECTORY_ERROR', 'the user filter has no {login} placeholder');
  try {
    FilterParser.parseString(userFilterFor(template, 'x'));
  } catch {
    throw new DirectoryError('DIRECTORY_ERROR', 'the user filter is not a valid LDAP filter (RFC 4515)');
  }
}

/** Refused before any bind: an empty password is an unauthenticated bind, which "succeeds" (RFC 4513 §5.1.2). */
export class BlankPasswordError extends Error {}

/** Finds the user's entry and binds as it (see the file comment). */
export async function authenticate(
  conn: LdapConnection,
  login: string,
  password: string,
  log?: FastifyBaseLogger,
): Promise<LdapAuthenticateResponse> {
  if (password.trim() === '')
    throw new BlankPasswordError('an empty or whitespace-only password is refused before any bind');
  const service = await openFirst(conn);
  let activeDirectory: boolean;
  let loginAttr: string | null;
  let entries: Entry[];
  try {
    await bindService(service, conn);
    activeDirectory = await detectActiveDirectory(service, conn);
    const template = effectiveUserFilter(conn, activeDirectory);
    checkUserFilter(template);
    loginAttr = activeDirectory ? 'sAMAccountName' : loginAttribute(template);
    const attrs = [
      loginAttr,
      conn.attributes.displayName,
      conn.attributes.email,
      conn.attributes.role,
      conn.groups?.mode === 'memberOf' ? conn.groups.attr : null,
      'entryUUID',
      ...(activeDirectory ? ['objectGUID', 'userAccountControl'] : []),
    ];
    const attributes = [...new Set(attrs.filter((a): a is string => !!a))];
    const filter = userFilterFor(template, login);
    try {
      // Two are enough to know the match is not unique.
      ({ searchEntries: entries } = await service.op('user search', (c) =>
        c.search(conn.baseDn, {
          scope: 'sub',
          filter,
          attributes,
          sizeLimit: 2,
          timeLimit: Math.ceil(conn.searchTimeoutMs / 1000),
          explicitBufferAttributes: activeDirectory ? ['objectGUID'] : [],
        }),
      ));
    } catch (err) {
      if (err instanceof ResultCodeError && err.code === NO_SUCH_OBJECT)
        throw new DirectoryError(
          'DIRECTORY_ERROR',
          'the base DN was not found (or the service account cannot see it)',
          { cause: err },
        );
      throw err instanceof ResultCodeError ? classify(err, 'user search') : err;
    }
  } finally {
    await service.close();
  }
  if (entries.length !== 1) {
    log?.info({ matches: entries.length, url: service.url }, 'ldap authenticate: no single entry matched');
    // Same work as a known login (a second connection and a refused bind), so the time taken
    // does not tell which logins exist. Whatever happens there, the answer is the same.
    await decoyBind(service.url, conn).catch(() => {});
    return { outcome: 'invalid-credentials' };
  }
  const entry = entries[0]!;
  const user = await openSession(service.url, conn);
  try {
    await user.op('user bind', (c) => c.bind(entry.dn, password));
  } catch (err) {
    if (err instanceof ResultCodeError && err.code === INVALID_CREDENTIALS) {
      // Only AD's messages carry a sub-code worth reading; elsewhere result 49 is a wrong password.
      return activeDirectory ? adBindOutcome(err.message) : { outcome: 'invalid-credentials' };
    }
    throw err instanceof ResultCodeError ? classify(err, 'user bind') : err;
  } finally {
    await user.close();
  }
  // Checked only after the password proved right, so the state is not told to anyone else.
  if (activeDirectory) {
    const uac = Number.parseInt(values(entry, 'userAccountControl')[0] ?? '0', 10);
    if (uac & UF_ACCOUNTDISABLE) return { outcome: 'disabled', reason: 'account-disabled' };
    if (uac & UF_LOCKOUT) return { outcome: 'disabled', reason: 'locked-out' };
  }
  const profile = toProfile(entry, conn, { activeDirectory, loginAttr, login });
  const groups = await groupsOf(entry, conn, service.url);
  return { outcome: 'ok', activeDirectory, profile: groups ? { ...profile, groups } : profile };
}

/** The value of the first RDN of `dn` (`cn=Admins,ou=groups,...`: `Admins`), its escapes decoded. */
export function firstRdnValue(dn: string): string | null {
  let value = '';
  let seenEquals = false;
  for (let i = 0; i < dn.length; i++) {
    const ch = dn[i]!;
    if (ch === '\\' && i + 1 < dn.length) {
      const hex = dn.slice(i + 1, i + 3);
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        // A run of \XX escapes is UTF-8 bytes: collect them all before decoding.
        const bytes: number[] = [];
        while (dn[i] === '\\' && /^[0-9a-fA-F]{2}$/.test(dn.slice(i + 1, i + 3))) {
          bytes.push(Number.parseInt(dn.slice(i + 1, i + 3), 16));
          i += 3;
        }
        i--;
        if (seenEquals) value += Buffer.from(bytes).toString('utf8');
      } else {
        if (seenEquals) value += dn[i + 1];
        i++;
      }
      continue;
    }
    if (!seenEquals) {
      if (ch === '=') seenEquals = true;
      continue;
    }
    if (ch === ',' || ch === ';' || ch === '+') break;
    value += ch;
  }
  const trimmed = value.trim();
  return seenEquals && trimmed !== '' ? trimmed : null;
}

/**
 * The names of the user's groups (connection.groups): memberOf, the first RDN value of each DN in
 * the entry's attribute; search, the `nameAttr` of each entry under the base DN matching the filter,
 * with the user's DN escaped (RFC 4515) in place of {dn}, searched as the service account on a fresh
 * connection to the URL that answered. Undefined when the record reads no groups.
 */
export async function groupsOf(
  entry: Entry,
  conn: LdapConnection,
  url: string,
  service?: Session,
): Promise<string[] | undefined> {
  const g = conn.groups;
  if (!g || g.mode === 'none') return undefined;
  if (g.mode === 'memberOf') {
    return [...new Set(values(entry, g.attr).flatMap((dn) => firstRdnValue(dn) ?? []))];
  }
  const filter = groupFilterFor(g.filter, entry.dn);
  const s = service ?? (await openSession(url, conn));
  try {
    if (!service) await bindService(s, conn);
    const { searchEntries } = await s
      .op('group search', (c) =>
        c.search(g.baseDn, {
          scope: 'sub',
          filter,
          attributes: [g.nameAttr],
          sizeLimit: 1000,
          timeLimit: Math.ceil(conn.searchTimeoutMs / 1000),
        }),
      )
      .catch((err: unknown) => {
        throw err instanceof ResultCodeError ? classify(err, 'group search') : err;
      });
    return [...new Set(searchEntries.flatMap((e) => values(e, g.nameAttr)[0] ?? firstRdnValue(e.dn) ?? []))];
  } finally {
    if (!service) await s.close();
  }
}

/**
 * The groups of known users without their passwords (POST /v1/ldap/groups): one service session,
 * each login's entry found with the user filter as at a login, its groups read as at a login.
 */
export async function groupsOfLogins(conn: LdapConnection, logins: readonly string[]): Promise<LdapGroupsResponse> {
  const service = await openFirst(conn);
  try {
    await bindService(service, conn);
    const activeDirectory = await detectActiveDirectory(service, conn);
    const template = effectiveUserFilter(conn, activeDirectory);
    checkUserFilter(template);
    const attributes = conn.groups?.mode === 'memberOf' ? [conn.groups.attr] : ['1.1'];
    const results: LdapGroupsResponse['results'] = [];
    for (const login of logins) {
      const { searchEntries } = await service
        .op('user search', (c) =>
          c.search(conn.baseDn, {
            scope: 'sub',
            filter: userFilterFor(template, login),
            attributes,
            sizeLimit: 2,
            timeLimit: Math.ceil(conn.searchTimeoutMs / 1000),
          }),
        )
        .catch((err: unknown) => {
          throw err instanceof ResultCodeError ? classify(err, 'user search') : err;
        });
      const entry = searchEntries.length === 1 ? searchEntries[0]! : undefined;
      if (!entry) {
        results.push({ login, found: false });
        continue;
      }
      results.push({ login, found: true, groups: (await groupsOf(entry, conn, service.url, service)) ?? [] });
    }
    return { results };
  } finally {
    await service.close();
  }
}

/** A bind that cannot succeed (a DN that does not exist, a random password): timing cover only. */
async function decoyBind(url: string, conn: LdapConnection): Promise<void> {
  const s = await openSession(url, conn);
  try {
    await s.op('decoy bind', (c) => c.bind(`cn=${randomUUID()},${conn.baseDn}`, randomBytes(16).toString('base64url')));
  } finally {
    await s.close();
  }
}

/** Runs the diagnostic steps; the first failing step ends it with ok: false. */
export async function testConnection(conn: LdapConnection): Promise<LdapTestResponse> {
  const result: LdapTestResponse = { ok: false, url: null, activeDirectory: null, steps: [] };
  const step: StepRunner = async (name, fn, detail) => {
    const t0 = performance.now();
    const ms = () => Math.round((performance.now() - t0) * 10) / 10;
    try {
      const r = await fn();
      const d = detail?.(r);
      result.steps.push({ step: name, ok: true, ...(d ? { detail: d } : {}), ms: ms() });
      return r;
    } catch (err) {
      result.steps.push({ step: name, ok: false, detail: classify(err, name).detail, ms: ms() });
      throw err;
    }
  };
  let s: Session | undefined;
  try {
    s = await openFirst(conn, step);
    result.url = s.url;
    const session = s;
    await step(
      'bind',
      () => bindService(session, conn),
      (who) => who,
    );
    const activeDirectory = await step(
      'rootDse',
      () => detectActiveDirectory(session, conn),
      (ad) => (ad ? 'Active Directory' : 'not Active Directory'),
    );
    result.activeDirectory = activeDirectory;
    await step(
      'baseDn',
      () =>
        session
          .op('base DN', (c) =>
            c.search(conn.baseDn, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] }),
          )
          .catch((err: unknown) => {
            if (err instanceof ResultCodeError && err.code === NO_SUCH_OBJECT)
              throw new DirectoryError(
                'DIRECTORY_ERROR',
                'the base DN was not found (or the service account cannot see it)',
              );
            throw err;
          }),
      () => conn.baseDn,
    );
    const template = effectiveUserFilter(conn, activeDirectory);
    await step(
      'userFilter',
      async () => checkUserFilter(template),
      () => template,
    );
    result.ok = true;
  } catch {
    // recorded in the steps
  } finally {
    await s?.close();
  }
  return result;
}
