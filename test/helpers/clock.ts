// The test clock on its own, so that pure tests can take it without importing the app.
import type { Clock } from '../../src/deps.ts';

/** A controllable clock: starts at real time, moves only when told (or follows real time). */
export class TestClock implements Clock {
  private offset = 0;
  private frozen: Date | null = null;
  now(): Date {
    return this.frozen ? new Date(this.frozen) : new Date(Date.now() + this.offset);
  }
  set(d: Date) {
    this.frozen = new Date(d);
  }
  advance(ms: number) {
    if (this.frozen) this.frozen = new Date(this.frozen.getTime() + ms);
    else this.offset += ms;
  }
}
