// The pure parts of a create's warnings (src/domain/create-warnings.ts) and the opt-out phrase
// list (src/domain/opt-out.ts).
import { describe, expect, it } from 'vitest';
import { CreateWarnings, MAX_WARNING_CONTACTS, startAfterExpiryIssue, WARNING_CODES } from '../../src/domain/create-warnings.ts';
import { contactTurns, OPT_OUT_PHRASES, saysOptOut } from '../../src/domain/opt-out.ts';

describe('CreateWarnings', () => {
  it("one entry per code, in the codes' order, contacts in submission order, capped with the rest counted", () => {
    const w = new CreateWarnings();
    w.about('agent_cannot_detect_opt_outs', 'agent');
    for (let i = MAX_WARNING_CONTACTS + 5; i >= 1; i--) w.contact('alternate_invalid', i, `c${i}`);
    w.contact('alternate_on_do_not_call_list', 7, 'c7');
    w.about('no_protective_window', 'none');
    const list = w.list();
    expect(list.map((x) => x.code)).toEqual([
      'no_protective_window',
      'alternate_on_do_not_call_list',
      'alternate_invalid',
      'agent_cannot_detect_opt_outs',
    ]);
    expect(list[0]).toEqual({ code: 'no_protective_window', message: 'none', contactCount: null, contacts: [], contactsLeftOut: 0 });
    expect(list[1]).toMatchObject({ contactCount: 1, contacts: [{ index: 7, externalId: 'c7' }], contactsLeftOut: 0 });
    expect(list[1].message).toBe("1 alternate number is on the account's do-not-call list and will not be dialled (the primary number is called)");
    const invalid = list[2];
    // Arrived last-first: the first MAX kept are the first MAX seen, listed in index order.
    expect([invalid.contactCount, invalid.contacts.length, invalid.contactsLeftOut]).toEqual([MAX_WARNING_CONTACTS + 5, MAX_WARNING_CONTACTS, 5]);
    expect(invalid.contacts.map((c) => c.index)).toEqual([...invalid.contacts.map((c) => c.index)].sort((a, b) => a - b));
    expect(invalid.message).toBe(
      `${MAX_WARNING_CONTACTS + 5} contacts' alternate number is invalid or the same as the primary number and will not be dialled`,
    );
  });

  it('every contact code has a message in the singular and the plural', () => {
    for (const code of WARNING_CODES) {
      if (code === 'no_protective_window' || code === 'agent_cannot_detect_opt_outs') continue;
      const one = new CreateWarnings();
      one.contact(code, 1, 'a');
      const many = new CreateWarnings();
      many.contact(code, 1, 'a');
      many.contact(code, 2, 'b');
      expect(one.list()[0].message, code).toMatch(/^(1 |The calling window)/);
      expect(many.list()[0].message, code).toMatch(/2 /);
    }
  });

  it('memory is bounded by the cap whatever the number of contacts', () => {
    const w = new CreateWarnings();
    for (let i = 1; i <= 200_000; i++) w.contact('alternate_invalid', i, `c${i}`);
    const [x] = w.list();
    expect([x.contactCount, x.contacts.length, x.contactsLeftOut]).toEqual([200_000, MAX_WARNING_CONTACTS, 200_000 - MAX_WARNING_CONTACTS]);
  });
});

describe('a scheduled start at or after expires_at', () => {
  const at = (iso: string) => new Date(iso);
  it('is an expires_at problem for a scheduled batch only', () => {
    expect(startAfterExpiryIssue('scheduled', at('2026-01-20T14:00:00Z'), at('2026-01-18T00:00:00Z'))).toEqual({
      path: ['expiresAt'],
      reason: 'Value error, expires_at must be after the scheduled start (2026-01-20T14:00:00.000Z): the batch would expire before it dials',
    });
    expect(startAfterExpiryIssue('scheduled', at('2026-01-20T14:00:00Z'), at('2026-01-20T14:00:00Z'))).not.toBeNull();
    expect(startAfterExpiryIssue('scheduled', at('2026-01-20T14:00:00Z'), at('2026-01-20T14:00:00.001Z'))).toBeNull();
    expect(startAfterExpiryIssue('scheduled', at('2026-01-20T14:00:00Z'), null)).toBeNull();
    expect(startAfterExpiryIssue('manual', at('2026-01-20T14:00:00Z'), at('2026-01-18T00:00:00Z'))).toBeNull();
    expect(startAfterExpiryIssue('immediate', at('2026-01-20T14:00:00Z'), at('2026-01-18T00:00:00Z'))).toBeNull();
  });
});

describe('opt-out phrases', () => {
  it('each phrase is found in a sentence, any case, curly apostrophes, spacing', () => {
    for (const p of OPT_OUT_PHRASES) {
      expect(saysOptOut(`Well, ${p.toUpperCase()} please.`), p).toBe(true);
      expect(saysOptOut(p.replace(/ /g, '   ').replace(/'/g, '\u2019')), p).toBe(true);
    }
  });
  it('whole words only, and ordinary answers are not opt-outs', () => {
    for (const t of [
      'I stopped calling my aunt',
      'unsubscribed? no',
      'No need to call me back.',
      'Please call me back later this week.',
      'remember me?',
    ]) {
      expect(saysOptOut(t), t).toBe(false);
    }
  });
  it("reads the contact's turns only, bounded", () => {
    expect(contactTurns('Agent: stop calling?\nUser: go on\n  user :  fine\nnoise')).toEqual(['go on', 'fine']);
    expect(contactTurns(null)).toEqual([]);
    const huge = `User: hello\n${'x'.repeat(2_000_000)}\nUser: stop calling me`;
    expect(contactTurns(huge)).toEqual(['hello']);
  });
});

describe('rememberedZonesOf', () => {
  it('answers as zonesForNumber does, for numbers sharing and not sharing their leading digits', async () => {
    const { rememberedZonesOf } = await import('../../src/services/batches/create-warnings.ts');
    const { zonesForNumber } = await import('../../src/domain/number-zones.ts');
    const { numberZoneTable } = await import('../../src/services/batches/number-zone-table.ts');
    const table = numberZoneTable();
    const remembered = rememberedZonesOf(table);
    const numbers = [
      '+12125550101',
      '+12125550102',
      '+18505550101',
      '+18504310101',
      '+18504310102',
      '+13105550104',
      '+442071838750',
      '+442071838751',
      '+61291234567',
      '+18005550107',
      '+33612345678',
    ];
    for (const n of [...numbers, ...numbers]) expect(remembered(n), n).toEqual(zonesForNumber(table, n));
  });
});
