/**
 * A User-Agent in words for the new-device mail (architecture.md §4): the browser with its major
 * version and the operating system, from the common tokens only (no dependency, no client hints,
 * which a login request does not carry). What it cannot name stays undefined; the mail then shows
 * the header itself, cut short.
 */
export interface ClientInWords {
  browser?: string;
  system?: string;
}

/** Longest User-Agent shown as is when nothing in it is recognised. */
export const MAX_SHOWN_USER_AGENT = 200;

// Order matters: Edge and Opera also say Chrome, Chrome also says Safari.
const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\b(?:OPR|Opera)\/(\d+)/, 'Opera'],
  [/\bYaBrowser\/(\d+)/, 'Yandex Browser'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, 'Firefox'],
  [/\bHeadlessChrome\/(\d+)/, 'Headless Chrome'],
  [/\b(?:Chrome|CriOS)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/^curl\/(\d+)/, 'curl'],
];

const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bWindows\b/, 'Windows'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

/** The browser ("Firefox 128") and system ("Windows") of a User-Agent header. */
export function describeUserAgent(userAgent: string | null | undefined): ClientInWords {
  const ua = userAgent ?? '';
  const found = BROWSERS.find(([re]) => re.test(ua));
  const browser = found ? `${found[1]} ${found[0].exec(ua)![1]}` : undefined;
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1];
  return { browser, system };
}
