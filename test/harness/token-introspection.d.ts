/** Types of token-introspection (an RFC 7662 client; the package ships none). */
declare module 'token-introspection' {
  interface Options {
    endpoint: string;
    client_id?: string;
    client_secret?: string;
    fetch?: typeof fetch;
  }
  /** Resolves the introspection answer of an active token; rejects (TokenNotActiveError) otherwise. */
  export default function tokenIntrospection(
    options: Options,
  ): (token: string, tokenTypeHint?: string) => Promise<Record<string, unknown>>;
}
