/**
 * The Node host's webhook transport (docs/webhooks.md, "Targets"): node:http(s) with a `lookup` of its own, so
 * the address a connection uses is the address that was checked. The name is resolved with dns.lookup (all
 * addresses), every address goes through the rules (webhooks/targets.ts), and one refused address refuses the
 * call (a name that answers a public and a private address is a rebinding attempt or a mistake). No redirect is
 * followed (node:http follows none), the answer is read up to ANSWER_BYTES, and the call ends at its timeout.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { addressRefusal, checkTarget, type TargetRules } from '../src/webhooks/targets.js';
import { ANSWER_BYTES, type WebhookFetch } from '../src/webhooks/transport.js';

type Resolver = (host: string, cb: (err: Error | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (host, cb) => dnsLookup(host, { all: true }, cb);

/**
 * A `lookup` for net.connect that resolves `urlHost` and hands over its addresses only when every one passes
 * the rules; otherwise the connection fails with the reason.
 */
export function checkedLookup(urlHost: string, rules: TargetRules, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (err, addresses) => {
      if (err) return callback(err, '', 4);
      if (addresses.length === 0) return callback(new Error(`refused: ${hostname} has no address`), '', 4);
      for (const a of addresses) {
        const refusal = addressRefusal(a.address, urlHost, rules);
        if (refusal) return callback(new Error(`refused: ${hostname} resolves to ${refusal}`), '', 4);
      }
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** The transport of the Node host; `resolve` replaces DNS in tests. */
export function createWebhookTransport(resolve: Resolver = systemResolver): WebhookFetch {
  // Kept-alive connections per receiver: a socket is reused only for the host and port it was opened to, and
  // was opened to an address the lookup checked.
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: 8 }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: 8 }),
  };
  return (req) =>
    new Promise((done, fail) => {
      const target = checkTarget(req.url, req.rules);
      if ('refused' in target) return fail(new Error(`refused: ${target.refused}`));
      const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
      const body = Buffer.from(req.body);
      let timer: NodeJS.Timeout | undefined;
      const call = send(
        target.url,
        {
          method: 'POST',
          headers: { ...req.headers, 'content-length': String(body.length) },
          lookup: checkedLookup(target.host, req.rules, resolve),
          agent: target.url.protocol === 'https:' ? agents.https : agents.http,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const finish = (cut: boolean) => {
            clearTimeout(timer);
            const retryAfter = res.headers['retry-after'];
            done({
              status: res.statusCode ?? 0,
              retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
              body: Buffer.concat(chunks).subarray(0, ANSWER_BYTES).toString('utf8'),
            });
            // A longer answer is cut (its socket closed); a whole one leaves the socket to the next call.
            if (cut) res.destroy();
          };
          res.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            size += chunk.length;
            if (size >= ANSWER_BYTES) finish(true);
          });
          res.on('end', () => finish(false));
          res.on('error', () => finish(true));
        },
      );
      timer = setTimeout(
        () => call.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })),
        req.timeoutMs,
      );
      call.on('error', (err) => {
        clearTimeout(timer);
        fail(err);
      });
      call.end(body);
    });
}
