// Preloaded (`node --import`) into the processes a test starts on its test hosts: their stdin is a
// pipe from the test, so when the test process dies without its cleanup (SIGKILL), stdin ends and
// this process stops as an operator would stop it (SIGTERM) instead of running on, unowned.
process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.on('error', () => process.kill(process.pid, 'SIGTERM'));
process.stdin.resume();
