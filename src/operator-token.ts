// The embedded start's operator token. `npm start` on its own data dir without ADMIN_TOKEN makes a
// fresh one each start and leaves it in DATA_DIR/operator-token (mode 0600), so the operator CLI,
// run by the same user on the same machine, reaches the running server's admin API with no setup.
// With DATABASE_URL (a shared database, maybe many processes) ADMIN_TOKEN stays an explicit choice.
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

/**
 * Written only once the process owns the data dir, so a refused second start cannot replace it.
 * A new file every time (an old one, or a link in its place, is removed first), created 0600.
 */
export function writeOperatorToken(dataDir: string, token: string): void {
  const file = operatorTokenPath(dataDir);
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
}

/** A start with its own ADMIN_TOKEN clears an earlier start's file, so the CLI never sends a stale token. */
export function removeOperatorToken(dataDir: string): void {
  fs.rmSync(operatorTokenPath(dataDir), { force: true });
}

export function readOperatorToken(dataDir: string): string | null {
  try {
    const token = fs.readFileSync(operatorTokenPath(dataDir), 'utf8').trim();
    return token.length >= 16 ? token : null;
  } catch {
    return null;
  }
}
