/** Escaping for LDAP filters (RFC 4515), DN comparison (RFC 4514) and AD's GUID string form. */

/**
 * RFC 4515 §3: an assertion value escapes `*`, `(`, `)`, `\` and NUL as `\XX` (ASCII controls too,
 * harmlessly), so a login can never add wildcards or filter components. Non-ASCII stays literal
 * UTF-8, which RFC 4515 allows: ldapts's filter parser turns each `\XX` into one Latin-1 character,
 * so escaping `é` as `\c3\a9` would search for `Ã©`.
 */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\x00-\x1f\x7f]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The user filter with `{login}` replaced by the escaped login (a function: `$&` in a login stays literal). */
export function userFilterFor(template: string, login: string): string {
  const escaped = escapeFilterValue(login);
  return template.replaceAll('{login}', () => escaped);
}

/** The group filter with `{dn}` replaced by the escaped DN of the user's entry. */
export function groupFilterFor(template: string, dn: string): string {
  const escaped = escapeFilterValue(dn);
  return template.replaceAll('{dn}', () => escaped);
}

/** A DN in a comparable form (RFC 4514): escapes decoded, blanks around separators and case ignored. */
export function normalizeDn(dn: string): string {
  const rdns: string[][] = [];
  let avas: string[] = [];
  let bytes: number[] = [];
  const text = () => Buffer.from(bytes).toString('utf8').trim().toLowerCase();
  const flush = (endRdn: boolean) => {
    avas.push(text().replace(/\s*=\s*/, '='));
    bytes = [];
    if (endRdn) {
      rdns.push(avas.sort());
      avas = [];
    }
  };
  const raw = Buffer.from(dn, 'utf8');
  let seenEquals = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === 0x5c /* \ */ && i + 1 < raw.length) {
      const hex = raw.subarray(i + 1, i + 3).toString('latin1');
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        bytes.push(Number.parseInt(hex, 16));
        i += 2;
      } else {
        bytes.push(raw[++i]!);
      }
      // An escaped character is data: the separator rules below never see it.
      continue;
    }
    if (b === 0x3d /* = */ && !seenEquals) seenEquals = true;
    if ((b === 0x2c /* , */ || b === 0x3b /* ; */ || b === 0x2b) /* + */ && seenEquals) {
      flush(b !== 0x2b);
      seenEquals = false;
      continue;
    }
    bytes.push(b);
  }
  flush(true);
  return JSON.stringify(rdns);
}

/** AD's GUID string form of objectGUID: the first three fields little-endian (MS-DTYP 2.3.4.2). */
export function guidString(b: Uint8Array): string {
  const h = (idx: number[]) => idx.map((n) => b[n]!.toString(16).padStart(2, '0')).join('');
  return `${h([3, 2, 1, 0])}-${h([5, 4])}-${h([7, 6])}-${h([8, 9])}-${h([10, 11, 12, 13, 14, 15])}`;
}
