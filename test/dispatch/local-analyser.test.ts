import { describe, expect, it } from 'vitest';
import { createLocalAnalyser, parseTurns } from '../../src/dispatch/analysis/local-analyser.ts';
import type { AnalysisInput } from '../../src/dispatch/analysis/analyser.ts';
import { buildTranscript } from '../../src/dispatch/voice/transcript.ts';

const analyser = createLocalAnalyser();

const conversation = (userLines: string[]) =>
  [
    'Agent: Hello Jane Doe, this is Ava. I am calling about your order.',
    ...userLines.flatMap((u) => ['Agent: And?', `User: ${u}`]),
    'Agent: Goodbye!',
  ].join('\n');

function input(over: Partial<AnalysisInput>): AnalysisInput {
  return {
    transcript: conversation(["Yes, I'm interested. Tell me more.", 'Yes, please call me back later this week.']),
    outcomeKeys: ['interest_level', 'callbackRequested', 'sentiment', 'budget_confirmed'],
    contactMetadata: {},
    callStatus: 'completed',
    hangupBy: 'agent',
    ...over,
  };
}

describe('local analyser', () => {
  it('extracts interest, callback and sentiment from the user turns', async () => {
    const r = await analyser.analyse(input({}));
    expect(r.outcomes).toMatchObject({ interest_level: 'interested', callbackRequested: 'yes', sentiment: 'positive' });
    expect(Object.keys(r.outcomes)).toEqual(['interest_level', 'callbackRequested', 'sentiment', 'budget_confirmed']);
    expect(['yes', 'no', 'unknown']).toContain(r.outcomes.budget_confirmed);
  });

  it('reads the opposite answers', async () => {
    const r = await analyser.analyse(input({ transcript: conversation(["No, I'm not interested, thanks.", 'No need to call me back.']) }));
    expect(r.outcomes).toMatchObject({ interest_level: 'not_interested', callbackRequested: 'no', sentiment: 'neutral' });
    expect(r.summary).toContain('was not interested');
  });

  it('treats a user hang-up without interest as negative', async () => {
    const r = await analyser.analyse(input({ transcript: conversation(["Sorry, I'm busy and have to go. Bye."]), hangupBy: 'user' }));
    expect(r.outcomes).toMatchObject({ interest_level: 'not_interested', sentiment: 'negative' });
    expect(r.summary).toContain('the contact hung up');
  });

  it('summarises who was called, how it ended and the turn count', async () => {
    const r = await analyser.analyse(input({}));
    expect(r.summary).toBe(
      'Called Jane Doe: 6 turns before the agent wrapped up the call. The contact was interested in hearing more and asked to be called back.',
    );
    const named = await analyser.analyse(input({ contactName: 'J. Doe' }));
    expect(named.summary.startsWith('Called J. Doe:')).toBe(true);
    const sys = await analyser.analyse(input({ hangupBy: 'system' }));
    expect(sys.summary).toContain('the system ended the call');
  });

  it('reports unknown outcomes and no conversation for unanswered calls', async () => {
    const r = await analyser.analyse(input({ transcript: '', callStatus: 'no_answer', hangupBy: null, contactMetadata: { Name: 'Joe' } }));
    expect(r.summary).toBe('Called Joe, but nobody answered; no conversation took place.');
    expect(Object.values(r.outcomes)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
    const busy = await analyser.analyse(input({ transcript: '', callStatus: 'busy', hangupBy: null }));
    expect(busy.summary).toBe('Called the contact, but the line was busy; no conversation took place.');
  });

  it('is deterministic, and the fallback value depends on transcript and key', async () => {
    const a = await analyser.analyse(input({}));
    expect(await analyser.analyse(input({}))).toEqual(a);
    const keys = Array.from({ length: 30 }, (_, i) => `custom_${i}`);
    const r = await analyser.analyse(input({ outcomeKeys: keys }));
    expect(new Set(Object.values(r.outcomes))).toEqual(new Set(['yes', 'no', 'unknown']));
  });

  it('agrees with the simulated transcripts', async () => {
    const seen = new Set<string>();
    for (const name of ['Ann', 'Bob', 'Cleo', 'Dan', 'Eve', 'Finn', 'Gus', 'Hal']) {
      const transcript = buildTranscript({
        agentName: 'Ava',
        promptText: 'Sell solar.',
        contactName: name,
        metadata: { city: 'Oslo' },
        endedBy: 'agent',
      });
      const r = await analyser.analyse(input({ transcript, outcomeKeys: ['interest'] }));
      const saidYes = transcript.includes("User: Yes, I'm interested");
      expect(r.outcomes.interest).toBe(saidYes ? 'interested' : 'not_interested');
      expect(r.summary.startsWith(`Called ${name}: ${parseTurns(transcript).length} turns`)).toBe(true);
      seen.add(r.outcomes.interest);
    }
    expect(seen.size).toBe(2);
  });

  it('parses speaker turns case-insensitively and skips other lines', () => {
    expect(parseTurns('agent: hi\n\nnoise\nUSER:  hello ')).toEqual([
      { speaker: 'agent', text: 'hi' },
      { speaker: 'user', text: 'hello' },
    ]);
  });
});
