import crypto from 'node:crypto';
import type { Database } from '../../db/client.ts';
import { modelSelectList } from '../../db/model-columns.ts';
import { AppError, invalidApiKey } from '../../errors.ts';
import { newId } from '../../domain/ids.ts';
import type { Account } from '../../generated/prisma/client.ts';
import { fixedStatement, runStatement } from '../../db/sql-statement.ts';
import type { KeyCache } from './key-cache.ts';

const KEY_PATTERN = /^sk_[A-Za-z0-9_-]{32,128}$/;

export function hashApiKey(key: string): string {
  return crypto.hash('sha256', key, 'hex');
}

/** `sk_` + 32 random bytes in base64url: 256 bits, shown once, stored only as a SHA-256 hash. */
export function generateApiKey(): string {
  return 'sk_' + crypto.randomBytes(32).toString('base64url');
}

export async function issueApiKey(db: Database, accountId: string): Promise<{ id: string; apiKey: string }> {
  const apiKey = generateApiKey();
  const id = newId('apiKey');
  await db.prisma.apiKey.create({
    data: { id, accountId, keyHash: hashApiKey(apiKey), prefix: apiKey.slice(0, 10) },
  });
  return { id, apiKey };
}

export async function revokeApiKey(db: Database, id: string): Promise<boolean> {
  const res = await db.prisma.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
  return res.count > 0;
}

/** Extracts the bearer token; anything malformed is simply "no key". */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/**
 * Resolves an API key to its account. Unknown, revoked and malformed keys are indistinguishable to
 * the caller (401); a known key on an account without API access is a 403. With a cache, a key
 * that authenticated within its TTL is not looked up again (key-cache.ts bounds the staleness).
 */
export async function authenticateApiKey(db: Database, token: string | null, cache?: KeyCache): Promise<Account> {
  if (!token || !KEY_PATTERN.test(token)) throw invalidApiKey();
  const hash = hashApiKey(token);
  const cached = cache?.get(hash);
  if (cached) return cached;
  const ticket = cache?.begin();
  // Every request of both surfaces runs this, so it is one raw statement rather than a Prisma query.
  const [row] = await runStatement<Account & { keyHash: string; revokedAt: Date | null }>(db, KEY_ACCOUNT_SQL, [hash]);
  // The lookup is by hash (an index probe); the comparison after it is constant time anyway.
  if (!row || !crypto.timingSafeEqual(Buffer.from(row.keyHash), Buffer.from(hash)) || row.revokedAt) {
    throw invalidApiKey();
  }
  const { keyHash: _hash, revokedAt: _revoked, ...account } = row;
  if (!account.apiAccessEnabled) {
    throw new AppError('FORBIDDEN', 'API access is not enabled for this account');
  }
  if (cache && ticket) cache.set(hash, account, ticket);
  return account;
}

/** Whether this key would still authenticate now (a long-running export checks it page by page). */
export async function apiKeyAuthenticates(db: Database, key: string): Promise<boolean> {
  return (await validKeyHashes(db, [hashApiKey(key)])).size === 1;
}

/** Of these key hashes, the ones that still authenticate (not revoked, account with API access). One statement. */
export async function validKeyHashes(db: Database, hashes: string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await runStatement<{ keyHash: string }>(db, VALID_KEYS_SQL, [hashes]);
  return new Set(rows.map((r) => r.keyHash));
}

const VALID_KEYS_SQL = `
SELECT k.key_hash AS "keyHash"
  FROM api_keys k JOIN accounts a ON a.id = k.account_id
 WHERE k.key_hash = ANY($1::text[]) AND k.revoked_at IS NULL AND a.api_access_enabled`;

const KEY_ACCOUNT_SQL = fixedStatement(`
SELECT k.key_hash AS "keyHash", k.revoked_at AS "revokedAt", ${modelSelectList('Account', 'a')}
  FROM api_keys k JOIN accounts a ON a.id = k.account_id
 WHERE k.key_hash = $1`);
