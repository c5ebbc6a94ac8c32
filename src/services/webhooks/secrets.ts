// Per-account signing secrets (`whsec_…`). Created lazily on first need; rotation keeps the
// previous secret signing alongside the new one for an overlap window, so receivers can switch
// without dropping a single event. Stored encrypted with the app secret: a database dump alone
// can't forge webhooks.
import crypto from 'node:crypto';
import type { AppDeps } from '../../deps.ts';
import type { Account } from '../../generated/prisma/client.ts';
import { notFound } from '../../errors.ts';
import { generateSecret, SECRET_PREFIX } from './signing.ts';

type Db = Pick<AppDeps['db'], 'prisma'>;
type SecretDeps = Pick<AppDeps, 'appSecret' | 'clock' | 'config'> & { db: Db };

const BOX_PREFIX = 'enc1:';

function boxKey(appSecret: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', appSecret, 'call-batch-service', 'webhook-signing-secret', 32));
}

export function sealSecret(appSecret: string, secret: string): string {
  const iv = crypto.randomBytes(12);
  const c = crypto.createCipheriv('aes-256-gcm', boxKey(appSecret), iv);
  const ct = Buffer.concat([c.update(secret, 'utf8'), c.final()]);
  return BOX_PREFIX + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url');
}

export function openSecret(appSecret: string, stored: string): string {
  // A plain `whsec_` value (set by hand by an operator) is accepted as is.
  if (stored.startsWith(SECRET_PREFIX)) return stored;
  if (!stored.startsWith(BOX_PREFIX)) throw new Error('webhook secret: unknown storage format');
  const raw = Buffer.from(stored.slice(BOX_PREFIX.length), 'base64url');
  const d = crypto.createDecipheriv('aes-256-gcm', boxKey(appSecret), raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(12, 28));
  try {
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  } catch {
    throw new Error('webhook secret: cannot decrypt (was APP_SECRET changed?)');
  }
}

export interface WebhookSecretInfo {
  secret: string;
  /** The secret before the last rotation, while it still signs (null outside the overlap). */
  previousSecret: string | null;
  rotatedAt: Date | null;
  /** When the previous secret stops signing (null when there is none). */
  previousSecretExpiresAt: Date | null;
}

interface SecretRow {
  webhook_secret: string | null;
  webhook_secret_previous: string | null;
  webhook_secret_rotated_at: Date | null;
}

function info(deps: SecretDeps, row: SecretRow): WebhookSecretInfo {
  const expires = row.webhook_secret_rotated_at
    ? new Date(row.webhook_secret_rotated_at.getTime() + deps.config.WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000)
    : null;
  const previousLive = !!(row.webhook_secret_previous && expires && deps.clock.now() < expires);
  return {
    secret: openSecret(deps.appSecret, row.webhook_secret!),
    previousSecret: previousLive ? openSecret(deps.appSecret, row.webhook_secret_previous!) : null,
    rotatedAt: row.webhook_secret_rotated_at,
    previousSecretExpiresAt: previousLive ? expires : null,
  };
}

async function readRow(db: Db, accountId: string): Promise<SecretRow | undefined> {
  const rows = await db.prisma.$queryRaw<SecretRow[]>`
    SELECT webhook_secret, webhook_secret_previous, webhook_secret_rotated_at FROM accounts WHERE id = ${accountId}`;
  return rows[0];
}

/** The account's secrets, creating the first one if the account has none yet (race-safe). */
export async function webhookSecret(deps: SecretDeps, accountId: string): Promise<WebhookSecretInfo> {
  let row = await readRow(deps.db, accountId);
  if (!row) throw notFound(`Account ${accountId} not found`);
  if (!row.webhook_secret) {
    // Two processes may race here: only the first write lands, both then read the same secret.
    await deps.db.prisma.$executeRaw`
      UPDATE accounts SET webhook_secret = ${sealSecret(deps.appSecret, generateSecret())}
      WHERE id = ${accountId} AND webhook_secret IS NULL`;
    row = (await readRow(deps.db, accountId))!;
  }
  return info(deps, row);
}

/** Secrets that sign an attempt made now: the current one, plus the previous one during the overlap. */
export async function signingSecrets(deps: SecretDeps, accountId: string): Promise<string[]> {
  const s = await webhookSecret(deps, accountId);
  return s.previousSecret ? [s.secret, s.previousSecret] : [s.secret];
}

/**
 * New current secret; the old one keeps signing for WEBHOOK_SECRET_OVERLAP_HOURS. Rotating again
 * inside the window drops the oldest secret (only two ever sign).
 */
export async function rotateWebhookSecret(deps: SecretDeps, account: Pick<Account, 'id'>): Promise<WebhookSecretInfo> {
  const fresh = sealSecret(deps.appSecret, generateSecret());
  const now = deps.clock.now();
  // The current value moves to `previous` in the same statement, so concurrent rotations serialise
  // on the row lock and none loses the secret receivers were using.
  const rows = await deps.db.prisma.$queryRaw<SecretRow[]>`
    UPDATE accounts SET
      webhook_secret_previous = webhook_secret,
      webhook_secret_rotated_at = CASE WHEN webhook_secret IS NULL THEN NULL ELSE ${now}::timestamptz END,
      webhook_secret = ${fresh}
    WHERE id = ${account.id}
    RETURNING webhook_secret, webhook_secret_previous, webhook_secret_rotated_at`;
  if (!rows[0]) throw notFound(`Account ${account.id} not found`);
  return info(deps, rows[0]);
}
