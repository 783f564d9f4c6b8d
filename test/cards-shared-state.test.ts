import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { statusQueryDecision } from '../src/modules/cards/shared/state.js';

/** The cards' reading of a status query of a request whose outcome is unknown (src/modules/cards/shared/state.ts). */
describe('statusQueryDecision', () => {
  type Answer = { kind: 'found'; status: string } | { kind: 'not_found' } | { kind: 'timeout' } | { kind: 'unknown' };
  const graceMs = 60_000;
  type Decision = { kind: 'resend' } | { kind: 'apply'; status: string };
  const again: Decision = { kind: 'resend' };
  const decide = (answer: Answer, ageMs: number) =>
    statusQueryDecision<Answer, Decision>(answer, ageMs, graceMs, again, (found) => ({
      kind: 'apply',
      status: found.status,
    }));

  it('a request the issuer has is what its answer says', () => {
    assert.deepEqual(decide({ kind: 'found', status: 'approved' }, 0), { kind: 'apply', status: 'approved' });
    assert.deepEqual(decide({ kind: 'found', status: 'rejected' }, graceMs * 10), {
      kind: 'apply',
      status: 'rejected',
    });
  });

  it('one the issuer never received is sent again only once past the grace: before it, it may be on its way', () => {
    assert.deepEqual(decide({ kind: 'not_found' }, graceMs - 1), { kind: 'wait' });
    assert.equal(decide({ kind: 'not_found' }, graceMs), again);
    assert.equal(decide({ kind: 'not_found' }, graceMs * 5), again);
  });

  it('no answer (a timeout, an unknown answer) teaches nothing: wait, whatever the age', () => {
    for (const answer of [{ kind: 'timeout' }, { kind: 'unknown' }] as const) {
      assert.deepEqual(decide(answer, 0), { kind: 'wait' });
      assert.deepEqual(decide(answer, graceMs * 100), { kind: 'wait' });
    }
  });
});
