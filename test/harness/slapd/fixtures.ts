/**
 * The directory content of the test slapd (test/harness/slapd.ts): one LDIF for slapadd, and the
 * users it holds with their passwords, so tests know what each login should yield. Logins include
 * filter metacharacters (`*`, `(`, `)`, `\`), a DN-escaped comma and non-ASCII letters, to prove
 * escaping end to end.
 */
import { createHash, randomBytes } from 'node:crypto';

export const BASE_DN = 'dc=example,dc=test';
export const SERVICE_DN = `cn=auth-service,ou=services,${BASE_DN}`;
export const ADMIN_GROUP_DN = `cn=auth-admins,ou=groups,${BASE_DN}`;
export const AUDITOR_GROUP_DN = `cn=auth-auditors,ou=groups,${BASE_DN}`;
/** The UPN suffix of the Active Directory flavour. */
export const UPN_DOMAIN = 'example.test';

/** A user of the test directory, with what the bridge should map it to. */
export interface DirectoryUser {
  /** The login as stored (uid, or sAMAccountName in the AD flavour). */
  login: string;
  dn: string;
  /** null: the entry has no userPassword (no bind can succeed). */
  password: string | null;
  displayName: string | null;
  email: string | null;
  /** The role by group membership (memberOf) and by employeeType alike. */
  role: 'admin' | 'auditor' | 'user';
  /** AD flavour: userPrincipalName. */
  upn?: string;
  /** AD flavour: userAccountControl (0x200 normal, 0x2 disabled, 0x10 locked out). */
  userAccountControl?: number;
  /** AD flavour: objectGUID as the bridge should print it (AD's GUID string form). */
  objectGuid?: string;
}

interface UserSpec {
  key: string;
  login: string;
  /** The RDN attribute value (AD flavour: cn, like AD; else uid). */
  cn: string;
  password: string | null;
  displayName: string | null;
  email: string | null;
  role: 'admin' | 'auditor' | 'user';
  /** A second entry elsewhere with the same login (ambiguous search). */
  ou?: string;
  userAccountControl?: number;
}

const PLAIN: UserSpec[] = [
  {
    key: 'alice',
    login: 'alice',
    cn: 'Alice Admin',
    password: 'alice-Secret-1',
    displayName: 'Alice Admin',
    email: 'alice@example.test',
    role: 'admin',
  },
  {
    key: 'bob',
    login: 'bob',
    cn: 'Bob Auditor',
    password: 'bob-Secret-2',
    displayName: 'Bob Auditor',
    email: 'bob@example.test',
    role: 'auditor',
  },
  // Leading and trailing blanks are part of a password (only an all-blank one is refused).
  {
    key: 'carol',
    login: 'Carol',
    cn: 'Carol User',
    password: '  carol pass  ',
    displayName: 'Carol User',
    email: 'carol@example.test',
    role: 'user',
  },
  {
    key: 'special',
    login: 'sp*cial(x)\\y',
    cn: 'Special Chars',
    password: 'special-Secret-3',
    displayName: 'Special (Chars)',
    email: null,
    role: 'user',
  },
  {
    key: 'comma',
    login: 'doe, john',
    cn: 'John Doe',
    password: 'comma-Secret-4',
    displayName: 'Doe, John',
    email: 'jdoe@example.test',
    role: 'user',
  },
  {
    key: 'jose',
    login: 'josé',
    cn: 'José Núñez',
    password: 'contraseña-5',
    displayName: 'José Núñez',
    email: 'jose@example.test',
    role: 'user',
  },
  { key: 'nopass', login: 'nopass', cn: 'No Password', password: null, displayName: null, email: null, role: 'user' },
  {
    key: 'twin1',
    login: 'twin',
    cn: 'Twin One',
    password: 'twin-Secret-6',
    displayName: 'Twin One',
    email: null,
    role: 'user',
  },
  {
    key: 'twin2',
    login: 'twin',
    cn: 'Twin Two',
    password: 'twin-Secret-6',
    displayName: 'Twin Two',
    email: null,
    role: 'user',
    ou: 'contractors',
  },
  // Directory logins the service's login rule refuses (a new line, an invisible character, markup).
  {
    key: 'newline',
    login: 'new\nline',
    cn: 'New Line',
    password: 'newline-Secret-7',
    displayName: 'New Line',
    email: null,
    role: 'user',
  },
  {
    key: 'zerowidth',
    login: 'zero\u200Bwidth',
    cn: 'Zero Width',
    password: 'zerowidth-Secret-8',
    displayName: 'Zero Width',
    email: null,
    role: 'user',
  },
  {
    key: 'markup',
    login: '<b>bold</b>',
    cn: 'Markup Login',
    password: 'markup-Secret-9',
    displayName: 'Markup Login',
    email: null,
    role: 'user',
  },
  // Look-alike logins: of the bootstrap administrator `root-admin` (Cyrillic о), a compatibility digit
  // (PRECIS refuses it), and of `zed-gone` (Cyrillic е), a login the tests delete to reserve it.
  {
    key: 'lookalike',
    login: 'r\u043E\u043Et-admin',
    cn: 'Look Alike',
    password: 'lookalike-Secret-10',
    displayName: 'Look Alike',
    email: null,
    role: 'user',
  },
  {
    key: 'compat',
    login: 'compat\u{1D7CF}',
    cn: 'Compat Digit',
    password: 'compat-Secret-11',
    displayName: 'Compat Digit',
    email: null,
    role: 'user',
  },
  {
    key: 'quarantined',
    login: 'z\u0435d-gone',
    cn: 'Quarantined Zed',
    password: 'quarantined-Secret-12',
    displayName: 'Quarantined Zed',
    email: null,
    role: 'user',
  },
];

const AD: UserSpec[] = [
  {
    key: 'ada',
    login: 'ada',
    cn: 'Ada Lovelace',
    password: 'ada-Secret-1',
    displayName: 'Ada Lovelace',
    email: 'ada@example.test',
    role: 'admin',
    userAccountControl: 0x200,
  },
  {
    key: 'brian',
    login: 'brian',
    cn: 'Brian Kernighan',
    password: 'brian-Secret-2',
    displayName: 'Brian Kernighan',
    email: 'bwk@example.test',
    role: 'auditor',
    userAccountControl: 0x200,
  },
  {
    key: 'ken',
    login: 'kthompson',
    cn: 'Thompson, Ken',
    password: 'ken-Secret-3',
    displayName: 'Ken Thompson',
    email: 'ken@example.test',
    role: 'user',
    userAccountControl: 0x200,
  },
  {
    key: 'grace',
    login: 'grace',
    cn: 'Grace Hopper',
    password: 'grace-Secret-4',
    displayName: 'Grace Hopper',
    email: 'grace@example.test',
    role: 'user',
    userAccountControl: 0x202,
  },
  {
    key: 'linus',
    login: 'linus',
    cn: 'Linus Torvalds',
    password: 'linus-Secret-5',
    displayName: 'Linus Torvalds',
    email: 'linus@example.test',
    role: 'user',
    userAccountControl: 0x210,
  },
];

/** RFC 4514 §2.4: escapes an attribute value for use in a DN (control characters as hex pairs). */
export function escapeDnValue(v: string): string {
  return v
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/[\x00-\x1f]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/^([ #])/, '\\$1')
    .replace(/ $/, '\\ ');
}

/** `{SSHA}` as slappasswd makes it: base64(SHA-1(password ‖ salt) ‖ salt). */
export function sshaHash(password: string): string {
  const salt = randomBytes(8);
  const digest = createHash('sha1').update(Buffer.from(password, 'utf8')).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`;
}

/** AD's GUID string: the first three fields little-endian (MS-DTYP 2.3.4.2). */
export function adGuidString(b: Uint8Array): string {
  const h = (i: number[]) => i.map((n) => b[n]!.toString(16).padStart(2, '0')).join('');
  return `${h([3, 2, 1, 0])}-${h([5, 4])}-${h([7, 6])}-${h([8, 9])}-${h([10, 11, 12, 13, 14, 15])}`;
}

/** RFC 2849: a SAFE-STRING value as is, anything else base64 (`attr:: ...`). */
function ldifLine(attr: string, value: string | Uint8Array): string {
  if (
    typeof value === 'string' &&
    /^[\x01-\x09\x0b\x0c\x0e-\x1f\x21-\x39\x3b\x3d-\x7f][\x01-\x09\x0b\x0c\x0e-\x7f]*$/.test(value) &&
    !value.endsWith(' ')
  ) {
    return `${attr}: ${value}`;
  }
  return `${attr}:: ${Buffer.from(value).toString('base64')}`;
}

function ldifEntry(dn: string, attrs: [string, string | Uint8Array][]): string {
  return [ldifLine('dn', dn), ...attrs.map(([a, v]) => ldifLine(a, v))].join('\n');
}

export interface Fixtures {
  ldif: string;
  users: Record<string, DirectoryUser>;
}

/** The LDIF (slapadd) and the users of one instance. */
export function buildFixtures(o: { activeDirectory: boolean; servicePassword: string }): Fixtures {
  const ad = o.activeDirectory;
  const entries: string[] = [];
  const add = (dn: string, attrs: [string, string | Uint8Array][]) => entries.push(ldifEntry(dn, attrs));
  add(BASE_DN, [
    ['objectClass', 'dcObject'],
    ['objectClass', 'organization'],
    ['o', 'Example Test'],
    ['dc', 'example'],
  ]);
  for (const ou of ['people', 'groups', 'services', 'contractors'])
    add(`ou=${ou},${BASE_DN}`, [
      ['objectClass', 'organizationalUnit'],
      ['ou', ou],
    ]);
  add(SERVICE_DN, [
    ['objectClass', 'applicationProcess'],
    ['objectClass', 'simpleSecurityObject'],
    ['cn', 'auth-service'],
    ['userPassword', sshaHash(o.servicePassword)],
  ]);

  const users: Record<string, DirectoryUser> = {};
  const members: Record<'admin' | 'auditor', string[]> = { admin: [], auditor: [] };
  for (const u of ad ? AD : PLAIN) {
    // AD names entries by cn (CN=Thompson\, Ken,...); OpenLDAP setups usually by uid.
    const dn = ad
      ? `cn=${escapeDnValue(u.cn)},ou=${u.ou ?? 'people'},${BASE_DN}`
      : `uid=${escapeDnValue(u.login)},ou=${u.ou ?? 'people'},${BASE_DN}`;
    const groups = u.role === 'admin' ? [ADMIN_GROUP_DN] : u.role === 'auditor' ? [AUDITOR_GROUP_DN] : [];
    if (u.role !== 'user') members[u.role].push(dn);
    const attrs: [string, string | Uint8Array][] = ad
      ? [
          ['objectClass', 'user'],
          ['objectClass', 'securityPrincipal'],
          ['sAMAccountName', u.login],
          ['userPrincipalName', `${u.login}@${UPN_DOMAIN}`],
        ]
      : [
          ['objectClass', 'inetOrgPerson'],
          ['uid', u.login],
        ];
    attrs.push(['cn', u.cn], ['sn', u.cn.split(/[ ,]+/).pop()!], ['employeeType', u.role]);
    if (u.displayName !== null) attrs.push(['displayName', u.displayName]);
    if (u.email !== null) attrs.push(['mail', u.email]);
    if (u.password !== null) attrs.push(['userPassword', sshaHash(u.password)]);
    const user: DirectoryUser = {
      login: u.login,
      dn,
      password: u.password,
      displayName: u.displayName,
      email: u.email,
      role: u.role,
    };
    if (ad) {
      const guid = randomBytes(16);
      attrs.push(['userAccountControl', String(u.userAccountControl ?? 0x200)], ['objectGUID', guid]);
      Object.assign(user, {
        upn: `${u.login}@${UPN_DOMAIN}`,
        userAccountControl: u.userAccountControl ?? 0x200,
        objectGuid: adGuidString(guid),
      });
    }
    // memberOf is kept by the memberof overlay for later changes; slapadd bypasses overlays, so
    // the initial values are written here.
    for (const g of groups) attrs.push(['memberOf', g]);
    add(dn, attrs);
    users[u.key] = user;
  }
  for (const [role, dn] of [
    ['admin', ADMIN_GROUP_DN],
    ['auditor', AUDITOR_GROUP_DN],
  ] as const) {
    const cn = dn.slice(3, dn.indexOf(','));
    const member = members[role].length > 0 ? members[role] : [SERVICE_DN];
    add(
      dn,
      ad
        ? [
            ['objectClass', 'group'],
            ['cn', cn],
            ['groupType', '-2147483646'],
            ...member.map((m): [string, string] => ['member', m]),
          ]
        : [['objectClass', 'groupOfNames'], ['cn', cn], ...member.map((m): [string, string] => ['member', m])],
    );
  }
  return { ldif: `${entries.join('\n\n')}\n`, users };
}
