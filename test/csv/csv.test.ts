// The CSV reading the dashboard and the CLI share (src/csv): RFC 4180 details, spreadsheet exports, and the contact mapping with
// per-row feedback the page shows before and after creating a batch.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CsvError, detectDelimiter, formatCsv, parseCsv } from '../../src/csv/csv.ts';
import { contactsFromCsv, CsvContactsError, lineOfDetail } from '../../src/csv/contacts-csv.ts';

const cells = (text: string) => parseCsv(text).map((r) => r.cells);

describe('parseCsv', () => {
  it('reads quoted fields, escaped quotes and line breaks inside quotes', () => {
    expect(cells('a,b,c\n"x, y","say ""hi""","two\nlines"\n')).toEqual([
      ['a', 'b', 'c'],
      ['x, y', 'say "hi"', 'two\nlines'],
    ]);
  });

  it('accepts CRLF, LF and CR line ends, a BOM, and no final line end', () => {
    expect(cells('\uFEFFa,b\r\n1,2\r3,4\n5,6')).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['3', '4'],
      ['5', '6'],
    ]);
  });

  it('skips blank lines and keeps the line each record starts on', () => {
    const recs = parseCsv('h1,h2\n\n"a\nb",c\r\n\r\nd,e\n');
    expect(recs.map((r) => r.line)).toEqual([1, 3, 6]);
    expect(recs[1].cells).toEqual(['a\nb', 'c']);
  });

  it('keeps empty cells, including trailing ones', () => {
    expect(cells('a,,c,\n,,,\n')).toEqual([
      ['a', '', 'c', ''],
      ['', '', '', ''],
    ]);
    expect(cells('""\n')).toEqual([['']]);
  });

  it('detects semicolon and tab separated exports from the header line', () => {
    expect(detectDelimiter('contact_id;phone_number\n1,2;3')).toBe(';');
    expect(detectDelimiter('a\tb\tc\n')).toBe('\t');
    expect(detectDelimiter('"x;y;z",b\n')).toBe(',');
    expect(cells('id;phone\n1;"+1 415; ext"\n')).toEqual([
      ['id', 'phone'],
      ['1', '+1 415; ext'],
    ]);
  });

  it('refuses an unterminated quote and text after a closing quote, naming the line', () => {
    expect(() => parseCsv('a,b\n"open,1\n2,3\n')).toThrow(CsvError);
    expect(() => parseCsv('a,b\n"open,1\n2,3\n')).toThrow(/line 2/);
    expect(() => parseCsv('a\n"x"y\n')).toThrow(/after a closing quote/);
  });

  it('reads back whatever formatCsv writes (property)', () => {
    const cell = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', ';', '"', '\n', '\r', '\t', 'é', '7') });
    const table = fc
      .integer({ min: 1, max: 5 })
      .chain((width) => fc.array(fc.array(cell, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 8 }))
      // A row of one empty cell is a blank line, which readers skip.
      .filter((rows) => rows.every((r) => !(r.length === 1 && r[0] === '')));
    fc.assert(
      fc.property(table, fc.constantFrom(',', ';', '\t'), (rows, sep) => {
        expect(parseCsv(formatCsv(rows, sep), sep).map((r) => r.cells)).toEqual(rows);
      }),
      { numRuns: 300 },
    );
  });
});

describe('contactsFromCsv', () => {
  it('maps known columns, keeps the others as metadata and reports rows it leaves out', () => {
    const text = [
      'Contact ID,Full Name,Phone Number,Company,Notes',
      'c1,Ada,+14155550101,Engines,',
      'c2,,+14155550102,,vip',
      ',NoId,+14155550103,,',
      'c4,NoPhone,,,',
      'c5,Short,12345,,',
      'c1,Again,+14155550106,,',
    ].join('\n');
    const r = contactsFromCsv(text);
    expect(r.rowCount).toBe(6);
    expect(r.contacts).toEqual([
      { contactId: 'c1', name: 'Ada', phoneNumber: '+14155550101', metadata: { Company: 'Engines' } },
      { contactId: 'c2', phoneNumber: '+14155550102', metadata: { Notes: 'vip' } },
    ]);
    expect(r.lines).toEqual([2, 3]);
    expect(r.issues).toEqual([
      { line: 4, contactId: null, field: 'contact_id', message: 'Field required' },
      { line: 5, contactId: 'c4', field: 'phone_number', message: 'Field required' },
      { line: 6, contactId: 'c5', field: 'phone_number', message: 'String should have at least 8 characters' },
      { line: 7, contactId: 'c1', field: 'contact_id', message: 'Duplicate contact_id (first on line 2)' },
    ]);
  });

  it('numbers contacts by row when the file has no contact_id column, and accepts camelCase headers', () => {
    const r = contactsFromCsv('name;phoneNumber\nA;+14155550101\nB;+14155550102\n');
    expect(r.contacts.map((c) => c.contactId)).toEqual(['row-1', 'row-2']);
  });

  it('explains files it cannot use', () => {
    expect(() => contactsFromCsv('')).toThrow(CsvContactsError);
    expect(() => contactsFromCsv('id,name\n1,A\n')).toThrow(/phone_number/);
    expect(() => contactsFromCsv('phone\n"+1415\n')).toThrow(/not valid CSV/);
  });

  it('points request-validation details at CSV lines', () => {
    expect(lineOfDetail('contacts.1.phoneNumber: String should have at least 8 characters', [2, 5, 9])).toBe(5);
    expect(lineOfDetail('startMode: Field required', [2])).toBeNull();
    expect(lineOfDetail('contacts.7.phoneNumber: x', [2])).toBeNull();
  });
});
