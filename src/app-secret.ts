import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';

/**
 * APP_SECRET signs recording URLs and encrypts provider secrets. Without one, the embedded mode
 * keeps a random secret in DATA_DIR so links stay valid across restarts.
 */
export function resolveAppSecret(config: Config): string {
  if (config.APP_SECRET) return config.APP_SECRET;
  if (config.DATABASE_URL) {
    throw new Error('APP_SECRET: required when DATABASE_URL is set (every process must share it)');
  }
  const file = path.resolve(config.DATA_DIR, 'app-secret');
  fs.mkdirSync(config.DATA_DIR, { recursive: true });
  if (!fs.existsSync(file)) fs.writeFileSync(file, crypto.randomBytes(32).toString('base64url'), { mode: 0o600 });
  return fs.readFileSync(file, 'utf8').trim();
}
