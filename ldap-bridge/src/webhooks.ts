/**
 * The bridge's webhook relay (docs/webhooks.md, "Targets"; docs/operations-bridge.md §3): POST
 * /v1/webhooks/deliver sends one signed webhook of a subscription with `delivery: bridge` to a receiver whose
 * certificate comes from a private CA. The receiver's certificate is verified with BRIDGE_WEBHOOK_CA (a PEM
 * file) plus the system roots; no redirect is followed; the answer is read up to WEBHOOK_ANSWER_BYTES; the
 * call ends at its timeout.
 *
 * The bridge stands in the on-prem network, so it must not become a proxy into it: it sends only to the
 * hosts of BRIDGE_WEBHOOK_HOSTS (host names, addresses, CIDR ranges; empty: to none). The URL's host name
 * is resolved here, every address checked (a listed name, or an address inside a listed range), and the
 * connection goes to the checked addresses only (its `lookup` hands them over: DNS cannot answer one address
 * to the check and another to the connection).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, request, type RequestOptions } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { classifyUpstreamError } from './errtrack.js';
import { invalidBody, sendProblem } from './problem.js';
import {
  WEBHOOK_ANSWER_BYTES,
  WEBHOOK_RELAY_MAX_BYTES,
  WebhookDeliverRequestSchema,
  type WebhookDeliverResponse,
} from '../../schema/bridge/index.js';

/** Resolves a host name to every address (dns.lookup with `all`; tests replace it). */
export type Resolver = (host: string) => Promise<LookupAddress[]>;

/** What the bridge's environment says about webhooks. */
export interface WebhookRelayOptions {
  /** PEM of the CA(s) of the receivers (BRIDGE_WEBHOOK_CA), trusted besides the system roots. */
  ca?: string;
  /** BRIDGE_WEBHOOK_HOSTS: host names, IP addresses or CIDR ranges; empty: the relay refuses every call. */
  hosts: readonly string[];
  resolve?: Resolver;
}

/** Reads the options from the bridge's environment; a malformed BRIDGE_WEBHOOK_HOSTS entry throws. */
export function webhookOptionsFromEnv(env: NodeJS.ProcessEnv, readFile: (path: string) => string) {
  const hosts = (env.BRIDGE_WEBHOOK_HOSTS ?? '')
    .split(/[,;\s]+/)
    .map((h) => h.trim())
    .filter(Boolean);
  allowList(hosts);
  return { ca: env.BRIDGE_WEBHOOK_CA ? readFile(env.BRIDGE_WEBHOOK_CA) : undefined, hosts };
}

/** A host as compared: lower case, without brackets or a trailing dot. */
function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '');
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its IPv4 address. */
function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

interface AllowList {
  names: Set<string>;
  ranges: BlockList;
  empty: boolean;
}

/** The allow-list of BRIDGE_WEBHOOK_HOSTS: names apart, addresses and ranges in a BlockList. */
export function allowList(entries: readonly string[]): AllowList {
  const names = new Set<string>();
  const ranges = new BlockList();
  for (const raw of entries) {
    const entry = normalHost(raw);
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (family !== 0) {
      const type = family === 4 ? 'ipv4' : 'ipv6';
      const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
      if (extra !== undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128))
        throw new Error(`BRIDGE_WEBHOOK_HOSTS: "${raw}" is no address or CIDR range`);
      ranges.addSubnet(address!, prefix, type);
    } else if (/^[a-z0-9.-]+$/.test(entry)) {
      names.add(entry);
    } else {
      throw new Error(`BRIDGE_WEBHOOK_HOSTS: "${raw}" is no host name, address or CIDR range`);
    }
  }
  return { names, ranges, empty: entries.length === 0 };
}

/** Whether `address` lies in a listed address or range. */
function inRanges(list: AllowList, address: string): boolean {
  const a = plainAddress(address);
  const family = isIP(a);
  return family !== 0 && list.ranges.check(a, family === 4 ? 'ipv4' : 'ipv6');
}

const systemResolver: Resolver = (host) =>
  new Promise((done, fail) => dnsLookup(host, { all: true }, (err, a) => (err ? fail(err) : done(a))));

/** A `lookup` that hands over the addresses checked before, without asking DNS again. */
function fixedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

/** Headers the bridge sets itself, or that would change the connection. */
const DROPPED = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'te']);

class Refused extends Error {}

/** The relay as a Fastify plugin: registers POST /v1/webhooks/deliver. */
export async function webhooksPlugin(app: FastifyInstance, o: { options?: WebhookRelayOptions }): Promise<void> {
  const options = o.options ?? { hosts: [] };
  const list = allowList(options.hosts);
  const resolve = options.resolve ?? systemResolver;
  // The system roots plus the private CA: `ca` alone would replace the roots.
  const context: SecureContext = createSecureContext({
    ca: options.ca ? [...rootCertificates, options.ca] : [...rootCertificates],
  });
  // Kept-alive connections: a socket is reused only for the host and port it was opened to, whose addresses
  // were checked then (the allow-list does not change while the bridge runs).
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  app.addHook('onClose', async () => agent.destroy());

  /** The checked addresses of `host`, or a Refused error naming why. */
  const addressesOf = async (host: string): Promise<LookupAddress[]> => {
    if (isIP(host) !== 0) {
      if (!inRanges(list, host)) throw new Refused(`${host} is not in BRIDGE_WEBHOOK_HOSTS`);
      return [{ address: host, family: isIP(host) }];
    }
    const addresses = await resolve(host);
    if (addresses.length === 0) throw new Refused(`${host} has no address`);
    if (!list.names.has(host)) {
      for (const a of addresses)
        if (!inRanges(list, a.address))
          throw new Refused(`${host} resolves to ${a.address}, which is not in BRIDGE_WEBHOOK_HOSTS`);
    }
    return addresses;
  };

  app.post('/v1/webhooks/deliver', { bodyLimit: WEBHOOK_RELAY_MAX_BYTES * 2 }, async (req, reply) => {
    const parsed = WebhookDeliverRequestSchema.safeParse(req.body);
    if (!parsed.success) return sendProblem(reply, 400, 'BAD_REQUEST', invalidBody(parsed.error));
    const { url: text, headers, body, timeoutMs } = parsed.data;
    const started = Date.now();
    const refuse = (why: string) => sendProblem(reply, 403, 'WEBHOOK_TARGET_REFUSED', `refused: ${why}`);
    if (list.empty) return refuse('BRIDGE_WEBHOOK_HOSTS is empty, so this bridge relays webhooks to no host');
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return refuse('not an absolute URL');
    }
    if (url.protocol !== 'https:') return refuse('only https:// URLs');
    if (url.username !== '' || url.password !== '') return refuse('a user name or password in the URL');
    const host = normalHost(url.hostname);
    const deadline = AbortSignal.timeout(timeoutMs);
    let addresses: LookupAddress[];
    try {
      addresses = await addressesOf(host);
    } catch (err) {
      if (err instanceof Refused) return refuse(err.message);
      const c = classifyUpstreamError(err, { what: 'the receiver', caSetting: 'BRIDGE_WEBHOOK_CA' }, true);
      return sendProblem(reply, 502, 'UPSTREAM_UNAVAILABLE', `the receiver's host name does not resolve: ${c.detail}`);
    }
    const payload = Buffer.from(body, 'utf8');
    const sent: Record<string, string> = { 'content-length': String(payload.length) };
    for (const [k, v] of Object.entries(headers)) if (!DROPPED.has(k.toLowerCase())) sent[k.toLowerCase()] = v;
    try {
      const out = await new Promise<WebhookDeliverResponse>((done, fail) => {
        const call = request(
          url,
          // secureContext reaches tls.connect through the agent (RequestOptions' type does not list it).
          {
            method: 'POST',
            headers: sent,
            agent,
            secureContext: context,
            rejectUnauthorized: true,
            lookup: fixedLookup(addresses),
            signal: deadline,
          } as RequestOptions,
          (res) => {
            const chunks: Buffer[] = [];
            let size = 0;
            let finished = false;
            const finish = (cut: boolean) => {
              if (finished) return;
              finished = true;
              const retryAfter = res.headers['retry-after'];
              done({
                status: res.statusCode ?? 0,
                retryAfter: typeof retryAfter === 'string' ? retryAfter.slice(0, 256) : null,
                body: Buffer.concat(chunks).subarray(0, WEBHOOK_ANSWER_BYTES).toString('utf8'),
                durationMs: Date.now() - started,
              });
              // A longer answer is cut (its socket closed); a whole one leaves the socket to the next call.
              if (cut) res.destroy();
            };
            res.on('data', (chunk: Buffer) => {
              chunks.push(chunk);
              size += chunk.length;
              if (size >= WEBHOOK_ANSWER_BYTES) finish(true);
            });
            res.on('end', () => finish(false));
            res.on('error', (err) => (finished ? undefined : fail(err)));
          },
        );
        call.on('error', fail);
        call.end(payload);
      });
      return reply.code(200).send(out);
    } catch (err) {
      const c = classifyUpstreamError(err, { what: 'the receiver', caSetting: 'BRIDGE_WEBHOOK_CA' }, true);
      req.log.warn({ code: c.code, reason: c.detail, host }, 'webhook relay failed');
      return sendProblem(reply, c.status, c.code, c.detail);
    }
  });
}
