// Lines of a byte stream, read in place: a line is handed on as a range of its chunk (or, when it
// spans chunks, of a small carry buffer), and a line longer than the bound is reported as too long
// without holding it. Memory: one chunk and MAX_REGISTRY_LINE_BYTES.
import { MAX_REGISTRY_LINE_BYTES } from '../../domain/registry.ts';

/** `bytes[start, end)` is line `lineNo` (1-based, line end excluded); `tooLong` when it was cut. */
export type OnLine = (bytes: Uint8Array, start: number, end: number, lineNo: number, tooLong: boolean) => void;

export class LineSplitter {
  private readonly carry = new Uint8Array(MAX_REGISTRY_LINE_BYTES);
  private carried = 0;
  private overflow = false;
  lineNo = 0;

  constructor(private readonly onLine: OnLine) {}

  push(chunk: Uint8Array): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.lineNo++;
      if (this.carried > 0 || this.overflow) {
        this.append(chunk, start, nl);
        this.onLine(this.carry, 0, this.carried, this.lineNo, this.overflow);
        this.carried = 0;
        this.overflow = false;
      } else if (nl - start > MAX_REGISTRY_LINE_BYTES) {
        this.onLine(chunk, start, start + MAX_REGISTRY_LINE_BYTES, this.lineNo, true);
      } else {
        this.onLine(chunk, start, nl, this.lineNo, false);
      }
      start = nl + 1;
    }
    this.append(chunk, start, chunk.length);
  }

  /** The last line, when the stream does not end with a line end. */
  end(): void {
    if (this.carried === 0 && !this.overflow) return;
    this.lineNo++;
    this.onLine(this.carry, 0, this.carried, this.lineNo, this.overflow);
    this.carried = 0;
    this.overflow = false;
  }

  private append(chunk: Uint8Array, start: number, end: number): void {
    const room = MAX_REGISTRY_LINE_BYTES - this.carried;
    if (end - start > room) {
      this.overflow = true;
      end = start + room;
    }
    this.carry.set(chunk.subarray(start, end), this.carried);
    this.carried += end - start;
  }
}
