// The embedded start's operator token. `npm start` on its own data dir without ADMIN_TOKEN makes a
// fresh one each start and leaves it in DATA_DIR/operator-token (mode 0600) with the address it
// listens on, so the operator CLI, run by the same user on the same machine, reaches the running
// server's admin API with no setup. The CLI sends it only to a server at that address that proves
// it holds it (services/auth/operator-proof.ts): a file left by a server that has gone names a
// port anyone may listen on now. With DATABASE_URL (a shared database, maybe many processes)
// ADMIN_TOKEN stays an explicit choice.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';

export const OPERATOR_TOKEN_FILE = 'operator-token';

export const operatorTokenPath = (dataDir: string) => path.join(dataDir, OPERATOR_TOKEN_FILE);

/** A new token when this start should make one, else null. */
export function newOperatorToken(config: Config): string | null {
  if (config.ADMIN_TOKEN || config.DATABASE_URL) return null;
  return crypto.randomBytes(32).toString('base64url');
}

/** The file's content: the token and the base URL of the server that wrote it. */
export interface OperatorTokenFile {
  token: string;
  /** null in a file written before the URL was recorded. */
  url: string | null;
}

/**
 * Written only once the process owns the data dir and listens, so a refused second start cannot
 * replace it. A new file every time (an old one, or a link in its place, is removed first), created 0600.
 */
export function writeOperatorToken(dataDir: string, content: { token: string; url: string }): void {
  const file = operatorTokenPath(dataDir);
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, JSON.stringify(content) + '\n', { mode: 0o600, flag: 'wx' });
}

/** A start with its own ADMIN_TOKEN clears an earlier start's file, so the CLI never sends a stale token. */
export function removeOperatorToken(dataDir: string): void {
  fs.rmSync(operatorTokenPath(dataDir), { force: true });
}

export function readOperatorToken(dataDir: string): OperatorTokenFile | null {
  let text: string;
  try {
    text = fs.readFileSync(operatorTokenPath(dataDir), 'utf8').trim();
  } catch {
    return null;
  }
  let content: OperatorTokenFile = { token: text, url: null };
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as Partial<Record<keyof OperatorTokenFile, unknown>>;
      content = { token: String(parsed.token ?? ''), url: typeof parsed.url === 'string' ? parsed.url : null };
    } catch {
      return null;
    }
  }
  return content.token.length >= 16 ? content : null;
}
