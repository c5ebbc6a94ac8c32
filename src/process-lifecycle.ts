// Process entry points (main.ts, worker.ts): start, then stop on SIGTERM/SIGINT.
import { ConfigError } from './config.ts';

/**
 * Signals are handled from the first moment: one arriving during start-up (migrations, the demo
 * seed) waits for start-up to finish, then stops like any other, so the database is always closed
 * and nothing is left half-written. A bad configuration exits 78 with its message; any other
 * start-up failure exits 1.
 */
export function runUntilSignalled<T>(start: () => Promise<T>, stop: (started: T, signal: string) => Promise<void>): void {
  const startup = start();
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    startup.then(
      async (started) => {
        try {
          await stop(started, signal);
          process.exit(0);
        } catch (e) {
          process.stderr.write(`shutdown failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
          process.exit(1);
        }
      },
      () => undefined, // start-up failed: reported below
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  startup.catch((e) => {
    if (e instanceof ConfigError) {
      process.stderr.write(e.message + '\n');
      process.exit(78);
    }
    process.stderr.write(`fatal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
