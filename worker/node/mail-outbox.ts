/**
 * The development outbox of the Node host (docs/mail.md, "Development outbox"), like Django's file
 * e-mail backend: while no mail server is configured, each mail is written as `<notification id>.eml`
 * (RFC 5322, composed by the bridge's own code, so the bytes are those SMTP would carry) into
 * `mail-outbox/` beside the database file (the data directory; `data/mail-outbox` for a remote
 * database). The files hold the mails' links: the folder is the owner's only (0700, files 0600).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeMessage } from '../../ldap-bridge/src/mail.js';
import type { ConfigSnapshot } from '../src/config/index.js';
import type { MailOutbox } from '../src/http/context.js';
import { dataFolder } from './data-folder.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The outbox folder: `mail-outbox` in the data folder (data-folder.ts). */
export function mailOutboxFolder(config: ConfigSnapshot): string {
  return join(dataFolder(config), 'mail-outbox');
}

/** The outbox in `folder` (created at the first mail). */
export function createFileOutbox(folder: string): MailOutbox {
  // Only ids the service made reach the file system: a UUID, never a name from a request.
  const fileOf = (id: string) => {
    if (!UUID.test(id)) throw new Error('not a notification id');
    return join(folder, `${id.toLowerCase()}.eml`);
  };
  return {
    folder,
    async write(id, message) {
      const file = fileOf(id);
      await mkdir(folder, { recursive: true, mode: 0o700 });
      // Whole or not at all: a reader never sees half a file.
      const partial = `${file}.${process.pid}.partial`;
      await writeFile(partial, await composeMessage(message), { mode: 0o600 });
      await rename(partial, file);
      return file;
    },
    async read(id) {
      try {
        return await readFile(fileOf(id));
      } catch {
        return null;
      }
    },
    async remove(ids) {
      await Promise.all(ids.filter((id) => UUID.test(id)).map((id) => rm(fileOf(id), { force: true })));
    },
  };
}
