import { describe, expect, it } from 'vitest';
import { TrieRouter } from 'hono/router/trie-router';
import { RememberingRouter } from './router.js';

const ROUTES: Array<[string, string]> = [
  ['ALL', '/*'],
  ['GET', '/v4/users/me'],
  ['GET', '/v4/users/me/tokens'],
  ['DELETE', '/v4/users/me/tokens/:tokenId'],
  ['GET', '/v4/users/:userId'],
  ['GET', '/v4/users/:userId/sessions'],
];

function both() {
  const remembering = new RememberingRouter<string>();
  const trie = new TrieRouter<string>();
  for (const [method, path] of ROUTES) {
    remembering.add(method, path, `${method} ${path}`);
    trie.add(method, path, `${method} ${path}`);
  }
  return { remembering, trie };
}

describe('RememberingRouter', () => {
  it('matches as the TrieRouter does, asked once or again', () => {
    const { remembering, trie } = both();
    const asked: Array<[string, string]> = [
      ['GET', '/v4/users/me'],
      ['GET', '/v4/users/me/tokens'],
      ['DELETE', '/v4/users/me/tokens/t1'],
      ['GET', '/v4/users/u1'],
      ['GET', '/v4/users/u2/sessions'],
      ['POST', '/v4/users/me'],
      ['GET', '/nowhere'],
    ];
    for (let round = 0; round < 2; round++)
      for (const [method, path] of asked)
        expect(remembering.match(method, path), `${method} ${path}`).toEqual(trie.match(method, path));
  });

  it('hands out the same match for the same method and path, with its own parameters', () => {
    const { remembering } = both();
    expect(remembering.match('GET', '/v4/users/me')).toBe(remembering.match('GET', '/v4/users/me'));
    const params = (method: string, path: string) =>
      (remembering.match(method, path)[0] as Array<[string, Record<string, string>]>).map(([, p]) => p);
    expect(params('GET', '/v4/users/u1')).toEqual([{}, { userId: 'u1' }]);
    expect(params('GET', '/v4/users/u2')).toEqual([{}, { userId: 'u2' }]);
    expect(params('GET', '/v4/users/u1')).toEqual([{}, { userId: 'u1' }]);
  });

  it('stays bounded when asked for many unknown paths, and still answers', () => {
    const { remembering, trie } = both();
    const me = remembering.match('GET', '/v4/users/me');
    for (let i = 0; i < 5_000; i++) remembering.match('GET', `/unknown/${i}`);
    const again = remembering.match('GET', '/v4/users/me');
    expect(again).toEqual(trie.match('GET', '/v4/users/me'));
    expect(again).toEqual(me);
  });
});
