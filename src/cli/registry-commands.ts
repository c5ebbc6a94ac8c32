// The CLI's imports of the national do-not-call registry (the US registry's download format: one
// 10-digit number a line, a file per area code) and of reassigned-number results, to the server's
// operator routes (http/registry-import.ts). Files are read as streams and sent in parts cut at
// line ends, so neither side holds a whole file: memory is one part (PART_BYTES) whatever the size.
import fs from 'node:fs';
import { MAX_REGISTRY_PART_BYTES, REGISTRY_IMPORT_MODES, type RegistryImportMode } from '../domain/registry.ts';
import { list, need, type Command, type CommandIo } from './command.ts';

/** A part is sent once it holds this much (then cut at its last line end): under the server's bound. */
const PART_BYTES = MAX_REGISTRY_PART_BYTES / 2;

interface PartResult {
  lines: number;
  numbers: number;
  badLines: number;
  badLineSamples: { line: number; text: string }[];
  blocks?: number;
  areaCodes?: number[];
}

/** The file's parts, each ending at a line end (the last may not), with the file line each starts at. */
async function* parts(file: string): AsyncGenerator<{ bytes: Uint8Array; firstLine: number }> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let firstLine = 1;
  const cut = (bytes: Buffer) => {
    let lines = 0;
    for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) lines++;
    const part = { bytes: new Uint8Array(bytes), firstLine };
    firstLine += lines;
    return part;
  };
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    held.push(chunk);
    heldBytes += chunk.length;
    if (heldBytes < PART_BYTES) continue;
    const all = Buffer.concat(held);
    const end = all.lastIndexOf(10) + 1;
    if (end === 0) throw new Error(`${file}: no line end in ${heldBytes} bytes; is it a registry file?`);
    yield cut(all.subarray(0, end));
    held = [all.subarray(end)];
    heldBytes = all.length - end;
  }
  if (heldBytes > 0) yield cut(Buffer.concat(held));
}

interface Totals {
  files: number;
  lines: number;
  numbers: number;
  badLines: number;
  blocks: number;
}

async function sendFiles(io: CommandIo, files: string[], route: (firstLine: number) => string, areaCodes?: Set<number>): Promise<Totals> {
  const post = io.post;
  if (!post) throw new Error('This command needs a server connection');
  const totals: Totals = { files: files.length, lines: 0, numbers: 0, badLines: 0, blocks: 0 };
  for (const file of files) {
    for await (const part of parts(file)) {
      const r = await post<PartResult>(route(part.firstLine), part.bytes);
      totals.lines += r.lines;
      totals.numbers += r.numbers;
      totals.badLines += r.badLines;
      totals.blocks += r.blocks ?? 0;
      for (const code of r.areaCodes ?? []) areaCodes?.add(code);
      io.progress(null);
      for (const b of r.badLineSamples) io.note(`${file} line ${b.line}: not a number: ${JSON.stringify(b.text)}`);
      if (r.badLines > r.badLineSamples.length)
        io.note(`${file}: ${r.badLines - r.badLineSamples.length} more bad lines from line ${part.firstLine}`);
      io.progress(`${file}: line ${part.firstLine + r.lines - 1}, ${totals.numbers} numbers so far`);
    }
  }
  io.progress(null);
  return totals;
}

function modeOf(v: unknown): RegistryImportMode {
  if (v === undefined) return 'add';
  if (typeof v === 'string' && (REGISTRY_IMPORT_MODES as readonly string[]).includes(v)) return v as RegistryImportMode;
  throw new Error(`--mode must be one of ${REGISTRY_IMPORT_MODES.join(', ')}`);
}

export const registryCommands: Record<string, Command> = {
  'registry import': {
    usage:
      'registry import --file F[,F…] [--mode add|remove|full]   (the national do-not-call registry, one 10-digit number a line; ' +
      'add and remove apply a delta; full replaces what is listed in the area codes the files hold)',
    examples: ['registry import --file registry-201.txt', 'registry import --file registry-201.txt --mode full'],
    async run(_gql, _a, f, io) {
      const files = list(need(f.file, 'file'))!;
      for (const file of files) if (!fs.existsSync(file)) throw new Error(`--file: ${file} does not exist`);
      const mode = modeOf(f.mode);
      if (mode !== 'full') {
        return sendFiles(io, files, (line) => `/admin/registry/numbers?mode=${mode}&first_line=${line}`);
      }
      const { since } = await io.post!<{ since: string }>('/admin/registry/numbers?mode=begin');
      const codes = new Set<number>();
      const totals = await sendFiles(
        io,
        files,
        (line) => `/admin/registry/numbers?mode=full&since=${encodeURIComponent(since)}&first_line=${line}`,
        codes,
      );
      const { removedBlocks } = await io.post!<{ removedBlocks: number }>(
        `/admin/registry/numbers?mode=finish&since=${encodeURIComponent(since)}&area_codes=${[...codes].sort((a, b) => a - b).join(',')}`,
      );
      return { ...totals, areaCodes: codes.size, removedBlocks };
    },
  },
  'registry reassigned': {
    usage: 'registry reassigned --file F[,F…]   (reassigned-number results: `<10-digit number>,<YYYY-MM-DD>` a line, the day it was reassigned)',
    examples: ['registry reassigned --file reassigned.csv'],
    async run(_gql, _a, f, io) {
      const files = list(need(f.file, 'file'))!;
      for (const file of files) if (!fs.existsSync(file)) throw new Error(`--file: ${file} does not exist`);
      const { blocks: _blocks, ...totals } = await sendFiles(io, files, (line) => `/admin/registry/reassigned?first_line=${line}`);
      return totals;
    },
  },
};
