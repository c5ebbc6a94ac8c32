// The hostile mix's attacker as its own process (forked by bench/load.ts), so that the attacks'
// client-side work does not share an event loop with the legitimate clients whose latency is
// measured. Receives the target over IPC, attacks until told to stop, and sends back its reports.
import { startAttacks, type AttackTarget } from './hostile-attacks.ts';

process.once('message', (start: { target: AttackTarget; only: string[]; inFlight: number | 'fleet' }) => {
  const attacks = startAttacks(start.target, start.only, start.inFlight);
  process.send!({ started: true });
  process.once('disconnect', () => process.exit(0));
  process.once('message', async () => {
    process.send!({ reports: await attacks.stop() }, () => process.exit(0));
  });
});
