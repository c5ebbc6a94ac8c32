// Named parameters in .sql files (src/db/named-sql.ts): turned positional once, only where
// PostgreSQL would read a parameter, and run the same on the suite's database (PGlite, or
// PostgreSQL with TEST_DATABASE_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNamedSql, namedSql, toPositional } from '../../src/db/named-sql.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { withSqlTransaction } from '../../src/db/sql-transaction.ts';
import { CLAIM_SQL, claimParams } from '../../src/dispatch/store/claim-calls.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

describe('toPositional', () => {
  it('numbers names by first use and reuses a number for a name used again', () => {
    expect(toPositional('SELECT :b, :a, :b + 1, :a_2')).toEqual({ text: 'SELECT $1, $2, $1 + 1, $3', names: ['b', 'a', 'a_2'] });
  });

  it('leaves casts, := and a lone colon alone', () => {
    expect(toPositional('SELECT :n::int, f(x := 1), a[1:2], : x')).toEqual({ text: 'SELECT $1::int, f(x := 1), a[1:2], : x', names: ['n'] });
  });

  it('reads no parameter inside comments, literals, quoted identifiers or dollar quotes', () => {
    const source = [
      "SELECT ':lit', 'it''s :still', E'\\':esc', \"col:quoted\", $$ :body $$, $fn$ :tagged $$ $fn$ -- :line comment",
      '/* :block /* :nested */ :still */ , :real',
    ].join('\n');
    const { text, names } = toPositional(source);
    expect(names).toEqual(['real']);
    expect(text).toBe(source.replace(':real', '$1'));
  });

  it('ends a line comment at the newline, so the next line is read', () => {
    expect(toPositional('-- :no\n:yes').names).toEqual(['yes']);
  });

  it('refuses positional parameters and unterminated quotes', () => {
    expect(() => toPositional('SELECT $1, :a')).toThrow(/positional parameter/);
    expect(toPositional('SELECT a$1 FROM t').names).toEqual([]);
    expect(() => toPositional("SELECT ':a")).toThrow(/unterminated ' quote/);
    expect(() => toPositional('SELECT /* :a')).toThrow(/unterminated comment/);
    expect(() => toPositional('SELECT $x$ :a')).toThrow(/unterminated dollar quote/);
  });
});

describe('namedSql', () => {
  it('orders values by the text, whatever the order they are given in', () => {
    const q = namedSql('SELECT :second, :first', ['first', 'second']);
    expect(q.names).toEqual(['second', 'first']);
    expect(q.params({ first: 1, second: null })).toEqual([null, 1]);
  });

  it('fails at load when the declared names and the text differ', () => {
    expect(() => namedSql('SELECT :a, :b', ['a'])).toThrow(/used but not declared: \[b\]/);
    expect(() => namedSql('SELECT :a', ['a', 'c'])).toThrow(/declared but not used: \[c\]/);
  });

  it('refuses a run with a value missing', () => {
    const q = namedSql('SELECT :a', ['a']);
    expect(() => q.params({} as { a: unknown })).toThrow(/no value for :a/);
  });

  it('reads the claim statement from its file next to the module: every name declared, no positional left over', () => {
    const claim = loadNamedSql(new URL('../../src/dispatch/store/claim-calls.sql', import.meta.url), [
      'batch_ids',
      'batch_takes',
      'batch_windowed',
      'now',
      'worker_id',
      'lease_expires_at',
      'dial_queued_delta',
      'dial_in_progress_delta',
      'dispatching_statuses',
      'account_id',
      'suppress_queued_delta',
      'suppress_cancelled_delta',
      'suppressed_reason',
      'cap_max_calls',
      'cap_period_seconds',
      'cap_wait_reason',
      'alternate_wait_reason',
    ]);
    expect(claim.text).toBe(CLAIM_SQL);
    const code = CLAIM_SQL.replace(/--[^\n]*/g, '').replace(/::/g, '');
    expect(code).not.toMatch(/:[a-z_]/i);
    const numbers = [...code.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
    expect(new Set(numbers)).toEqual(new Set(claim.names.map((_, i) => i + 1)));
    const now = new Date('2026-01-01T00:00:00Z');
    const params = claimParams(new Map([['b', 2]]), { accountId: 'acc_1', workerId: 'w', now, leaseExpiresAt: now });
    expect(params).toHaveLength(claim.names.length);
    expect(params[claim.names.indexOf('account_id')]).toBe('acc_1');
    expect(params[claim.names.indexOf('cap_max_calls')]).toBeNull();
  });
});

describe('named statements on the database', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  const q = namedSql(
    `-- :not_a_parameter in a comment
     SELECT :n::int + :n::int AS twice, ':x' AS literal, :names::text[] AS names, :maybe::int IS NULL AS missing`,
    ['n', 'names', 'maybe'],
  );

  it('runs as one statement, a name used twice bound once', async () => {
    const rows = await runStatement<{ twice: number; literal: string; names: string[]; missing: boolean }>(
      t.db,
      q.text,
      q.params({ n: 21, names: ['a', 'b'], maybe: null }),
    );
    expect(rows).toEqual([{ twice: 42, literal: ':x', names: ['a', 'b'], missing: true }]);
  });

  it('runs inside a transaction the same way', async () => {
    const rows = await withSqlTransaction(t.db, (tx) => tx.query<{ twice: number }>(q.text, q.params({ n: 2, names: [], maybe: 1 })));
    expect(rows[0].twice).toBe(4);
  });
});
