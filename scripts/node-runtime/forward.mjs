// Runs a command as if it were this process: same stdio, SIGINT/SIGTERM/SIGHUP passed on (so `npm start`
// still shuts down gracefully), and this process ends as the command did: its exit code, or its signal.
import { spawn } from 'node:child_process';
import os from 'node:os';

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function runAsThisProcess(command, args, env) {
  const child = spawn(command, args, { stdio: 'inherit', env });
  // A terminal's Ctrl-C reaches the child too; a second signal is harmless (shutdown is idempotent there).
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  child.on('error', (e) => {
    process.stderr.write(`cannot run ${command}: ${e.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    for (const s of FORWARDED) process.removeListener(s, forward);
    if (signal === null) process.exit(code === null ? 1 : code);
    // The shell's convention in case the signal's default action does not end this process.
    process.exitCode = 128 + (os.constants.signals[signal] || 0);
    process.kill(process.pid, signal);
  });
}
