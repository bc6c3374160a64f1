import { describe, expect, it } from 'vitest';
import { isLocalRequest, isLoopbackAddress, isLoopbackHostname } from './local-client.js';

const req = (url: string, headers: Record<string, string> = {}) => new Request(url, { headers });

describe('the first-run page decides who is local', () => {
  it('loopback addresses: 127.0.0.0/8, ::1 and IPv4-mapped 127.x; nothing else', () => {
    const loopback = ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1'];
    for (const a of loopback) expect(isLoopbackAddress(a), a).toBe(true);
    const others = [undefined, '', '192.0.2.2', '10.0.0.1', '::ffff:10.0.0.1', 'fd00::2', '128.0.0.1', '127.0.0'];
    for (const a of [...others, '127.0.0.256', 'localhost', '1127.0.0.1']) {
      expect(isLoopbackAddress(a), String(a)).toBe(false);
    }
  });

  it('loopback host names: localhost, 127.x, [::1]', () => {
    for (const h of ['localhost', '127.0.0.1', '[::1]']) expect(isLoopbackHostname(h), h).toBe(true);
    for (const h of ['localhost.attacker.example', 'attacker.example', '192.0.2.2', '127.0.0.1.nip.io']) {
      expect(isLoopbackHostname(h), h).toBe(false);
    }
  });

  it('local: a loopback client, a loopback host name, no proxy header', () => {
    expect(isLocalRequest(req('http://127.0.0.1:8001/api/auth/first-run'), '127.0.0.1')).toBe(true);
    expect(isLocalRequest(req('http://localhost:8001/x'), '::1')).toBe(true);
    expect(isLocalRequest(req('http://[::1]:8001/x'), '::ffff:127.0.0.1')).toBe(true);
  });

  it('not local: another client address, or none (a host that cannot tell)', () => {
    expect(isLocalRequest(req('http://127.0.0.1:8001/x'), '192.0.2.2')).toBe(false);
    expect(isLocalRequest(req('http://127.0.0.1:8001/x'), undefined)).toBe(false);
  });

  it('not local: a proxy on this machine (forwarding headers), whatever it forwards', () => {
    for (const h of ['Forwarded', 'X-Forwarded-For', 'X-Forwarded-Host', 'X-Real-IP']) {
      expect(isLocalRequest(req('http://127.0.0.1:8001/x', { [h]: '127.0.0.1' }), '127.0.0.1'), h).toBe(false);
    }
  });

  it('not local: any header naming a client (True-Client-IP, X-Client-IP, CF-Connecting-IP on Node...)', () => {
    const headers = ['True-Client-IP', 'X-Client-IP', 'CF-Connecting-IP', 'X-Cluster-Client-IP', 'Fastly-Client-IP'];
    for (const h of headers) {
      expect(isLocalRequest(req('http://127.0.0.1:8001/x', { [h]: '127.0.0.1' }), '127.0.0.1'), h).toBe(false);
    }
  });

  it("the edge host's own address header (CF-Connecting-IP) is its client address, not a proxy's", () => {
    const edge = req('http://127.0.0.1:8787/x', { 'CF-Connecting-IP': '127.0.0.1' });
    expect(isLocalRequest(edge, '127.0.0.1', 'CF-Connecting-IP')).toBe(true);
    const proxied = req('http://127.0.0.1:8787/x', { 'CF-Connecting-IP': '127.0.0.1', 'True-Client-IP': '192.0.2.1' });
    expect(isLocalRequest(proxied, '127.0.0.1', 'CF-Connecting-IP')).toBe(false);
  });

  it("not local: another site's name resolving to loopback (DNS rebinding)", () => {
    expect(isLocalRequest(req('http://attacker.example:8001/x'), '127.0.0.1')).toBe(false);
  });
});
