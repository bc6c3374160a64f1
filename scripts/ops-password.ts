/**
 * Reading a new password for the operator command: on a terminal, typed twice without echo; else
 * the first line of stdin (for scripts: `printf '%s\n' "$PW" | npm run ops -- ...`). Never argv,
 * where it would stay in the shell history and be visible in the process list.
 */

/** Reads everything from a non-terminal stdin and returns its first line (without the line end). */
async function firstLineOfStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

/** Reads one line from the terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    // Echo off before the prompt shows: what is typed (or pasted) as soon as it appears is not echoed.
    stdin.setRawMode(true);
    process.stderr.write(`${prompt}: `);
    stdin.resume();
    stdin.setEncoding('utf8');
    let value = '';
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (text: string) => {
      for (const ch of text) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003' || ch === '\u0004') return done(new Error('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The new password: typed twice at a terminal, or the first line of stdin. Refuses an empty one. */
export async function readPassword(what: string): Promise<string> {
  let password: string;
  if (process.stdin.isTTY) {
    password = await promptHidden(what);
    if (password !== '' && (await promptHidden('repeat it')) !== password) {
      throw new Error('the two passwords differ: nothing changed');
    }
  } else {
    password = await firstLineOfStdin();
  }
  if (password === '') throw new Error('no password given: type it at the prompt, or send it as the first stdin line');
  return password;
}
