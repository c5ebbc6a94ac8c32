// The body of GET …/results.csv: a pull-based stream that reads the next page of the export only
// when the client has taken the previous one (highWaterMark 0: nothing is read ahead), so memory
// holds one page whatever the batch's size. It ends, freeing the export's slot, when the last page
// is sent, when the client goes away, or when it cannot go on (the account's budget is spent, the
// time limit passed, the client took nothing for the idle limit, the database failed); in that last case the connection is cut without the
// final chunk, so every HTTP client sees a broken transfer instead of a file that looks complete.
import type { Logger } from 'pino';
import type { ResultsExport } from '../services/batches/export-batch-results.ts';
import { resultsCsvHeader, resultsCsvRows, type OptionalCsvColumn } from './results-csv.ts';

export interface CsvStreamOptions {
  /** The request's signal: aborted when the client disconnects. */
  signal: AbortSignal;
  /** Longest the export may stream. */
  maxMs: number;
  /** Longest the client may leave a page untaken: a stalled reader must not hold a slot until maxMs. */
  maxIdleMs: number;
  /** Cuts the client's connection; false when there is none (in-process), and the stream errors instead. */
  abortConnection(): boolean;
  logger: Logger;
  /** Columns after the call record's (their values ride on the export's rows). */
  extraColumns?: readonly OptionalCsvColumn[];
}

export function resultsCsvStream(exp: ResultsExport, opts: CsvStreamOptions): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let ended = false;
  let sentHeader = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  let idle: ReturnType<typeof setTimeout> | undefined;
  const end = () => {
    ended = true;
    clearTimeout(timer);
    clearTimeout(idle);
    opts.signal.removeEventListener('abort', onAbort);
    exp.close();
  };
  const fail = (reason: unknown) => {
    if (ended) return;
    end();
    opts.logger.warn({ reason: reason instanceof Error ? reason.message : String(reason), pages: exp.pagesRead }, 'CSV export cut short');
    if (opts.abortConnection()) controller.close();
    else controller.error(reason);
  };
  const onAbort = () => {
    if (!ended) end();
  };
  const timer = setTimeout(() => fail(new Error(`The export ran past its time limit of ${opts.maxMs / 1000} s`)), opts.maxMs);
  timer.unref?.();
  /** Armed whenever the export waits for the client to take the next page (the first one too). */
  const waitForClient = () => {
    idle = setTimeout(() => fail(new Error(`The client took nothing for ${opts.maxIdleMs / 1000} s`)), opts.maxIdleMs);
    idle.unref?.();
  };
  waitForClient();
  opts.signal.addEventListener('abort', onAbort);

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        if (opts.signal.aborted) onAbort();
      },
      async pull(c) {
        clearTimeout(idle);
        if (ended) return;
        try {
          // A client on loopback takes each page at once, and an embedded database answers without
          // leaving the event loop: without a turn of the loop here a whole export ran as one chain
          // of promises, and other requests (other tenants') waited for it to end.
          if (sentHeader) await new Promise((resolve) => setImmediate(resolve));
          if (ended) return;
          const { rows, last } = await exp.nextPage();
          if (ended) return;
          const text = (sentHeader ? '' : resultsCsvHeader(opts.extraColumns)) + resultsCsvRows(rows, opts.extraColumns);
          sentHeader = true;
          if (text) c.enqueue(encoder.encode(text));
          if (last) {
            end();
            c.close();
          } else waitForClient();
        } catch (e) {
          fail(e);
        }
      },
      cancel() {
        if (!ended) end();
      },
    },
    { highWaterMark: 0 },
  );
}
