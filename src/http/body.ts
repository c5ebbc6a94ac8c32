// Request bodies under hostile conditions: a size cap that does not trust Content-Length, strict
// UTF-8, and a nesting check that runs before JSON.parse (which happily spends seconds on a few
// MiB of "[[[[…" and hands back values that later recursive code cannot walk).
import { AppError } from '../errors.ts';
import type { BodyLease, BodyPace } from './body-budget.ts';

/** Containers nested deeper than this are refused before parsing (metadata itself allows far less). */
export const MAX_JSON_NESTING = 64;

export function payloadTooLarge(maxBytes: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);
}

/** The client stopped sending mid-body (or sends below the pace): its request gets 408. */
export function bodyTooSlow(pace: BodyPace): AppError {
  const perWindow = Math.ceil((pace.minBytesPerSecond * pace.windowMs) / 1000);
  return new AppError('REQUEST_TIMEOUT', `Request body arrived too slowly (under ${perWindow} bytes in ${pace.windowMs} ms)`);
}

/** The client went away before its body arrived: nobody reads the answer, and it is no fault of ours. */
export function clientClosed(): AppError {
  return new AppError('CLIENT_CLOSED_REQUEST', 'The client closed the connection before its request body arrived');
}

/**
 * Calls `cut` when a window of `pace.windowMs` brings fewer than its share of bytes: the pace times
 * the window, or what is left of a declared body, whichever is less. A body that stalls or trickles
 * is cut within one to two windows; one that keeps up is never judged by its total time.
 */
function watchPace(pace: BodyPace, declared: number | undefined, received: () => number, cut: () => void): () => void {
  const perWindow = (pace.minBytesPerSecond * pace.windowMs) / 1000;
  let atWindowStart = 0;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const judge = () => {
    const now = received();
    const due = Math.min(perWindow, declared === undefined ? Infinity : declared - atWindowStart);
    if (now - atWindowStart < due) return cut();
    atWindowStart = now;
    arm();
  };
  // Judged after the event loop's I/O phase: bytes that arrived while the process was busy count.
  const arm = () => (timer = setTimeout(() => (immediate = setImmediate(judge)), pace.windowMs).unref());
  arm();
  return () => {
    clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
  };
}

/**
 * The whole body, or PAYLOAD_TOO_LARGE as soon as it (declared or streamed) passes `maxBytes`.
 * Its bytes are counted on `lease` as they arrive; a body that falls behind the lease's pace is
 * REQUEST_TIMEOUT, one whose client went away CLIENT_CLOSED_REQUEST.
 */
export async function readBodyBytes(request: Request, maxBytes: number, lease: BodyLease): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw payloadTooLarge(maxBytes);
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  // Settles the pending read when the pace is missed: cancelling the reader does not (Node's request
  // stream leaves that read pending), and a race against one long-lived promise would pile up a
  // reaction per chunk.
  let interrupt: ((e: AppError) => void) | undefined;
  const stopWatching = watchPace(
    lease.pace,
    Number.isSafeInteger(declared) ? declared : undefined,
    () => size,
    () => interrupt?.(bodyTooSlow(lease.pace)),
  );
  try {
    for (;;) {
      const { done, value } = await new Promise<ReadableStreamReadResult<Uint8Array>>((resolve, reject) => {
        interrupt = reject;
        reader.read().then(resolve, reject);
      });
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw payloadTooLarge(maxBytes);
      lease.take(value.byteLength);
      chunks.push(value);
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    // Only the transport fails a read of the body stream: the connection was reset or closed.
    throw e instanceof AppError ? e : clientClosed();
  } finally {
    stopWatching();
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

/** True when JSON text nests arrays/objects deeper than `maxDepth` (bytes inside strings ignored). */
export function jsonNestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  // Buffer's indexOf is memchr: most of a large body is string content, skipped natively.
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let depth = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (b === 0x22) {
      // The closing quote is the next one not escaped by an odd run of backslashes.
      for (;;) {
        const q = buf.indexOf(0x22, i + 1);
        if (q < 0) return false; // unterminated string: JSON.parse refuses it
        let k = q - 1;
        while (buf[k] === 0x5c) k--;
        i = q;
        if ((q - 1 - k) % 2 === 0) break;
      }
    } else if (b === 0x5b || b === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}

const JSON_MEDIA_TYPE = /^\s*application\/([\w.+-]+\+)?json\s*$/i;

/**
 * Why a body sent with this Content-Type is not one we read (JSON in UTF-8, RFC 8259), or null.
 * `application/json`, `…+json`, with `charset=utf-8` or none; anything else, or no type, is a 415.
 */
export function jsonContentTypeProblem(header: string | null): string | null {
  const [type, ...params] = (header ?? '').split(';');
  if (!JSON_MEDIA_TYPE.test(type)) return 'Content-Type must be application/json';
  for (const param of params) {
    const [name, value = ''] = param.split('=');
    if (name.trim().toLowerCase() === 'charset' && value.trim().replace(/^"|"$/g, '').toLowerCase() !== 'utf-8') {
      return 'Content-Type charset must be utf-8';
    }
  }
  return null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict UTF-8 (RFC 8259): undecodable bytes are an error, never silently replaced. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}
