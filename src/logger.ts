import pino, { type Logger } from 'pino';

// Secrets never reach the logs: headers that carry them and fields that name them are redacted.
const REDACT = ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.api_key', 'apiKey', '*.secret', '*.webhookSecret', '*.token'];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { pid: process.pid } });
}
