/** The reconciliation of merchant-rule sets (src/modules/cards/controls/state.ts): what the issuer's answers mean. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rulesCallDecision, rulesQueryDecision } from '../src/modules/cards/controls/state.js';

describe('card controls state', () => {
  it(
    'a rule set: succeeded confirms, failed restores, never received re-pushes after the grace, anything else ' +
      'waits',
    () => {
      const found = (status: string) => ({ kind: 'found' as const, providerOrderId: 'CD3', status });
      assert.deepEqual(rulesQueryDecision(found('succeeded'), 0, 60_000), { kind: 'confirm' });
      assert.deepEqual(rulesQueryDecision(found('failed'), 0, 60_000), { kind: 'refused' });
      assert.deepEqual(rulesQueryDecision(found('processing'), 0, 60_000), { kind: 'wait' });
      assert.deepEqual(rulesQueryDecision(found('SANDBOX_UNKNOWN_STATUS'), 0, 60_000), { kind: 'wait' });
      assert.deepEqual(rulesQueryDecision({ kind: 'not_found' }, 1, 60_000), { kind: 'wait' });
      assert.deepEqual(rulesQueryDecision({ kind: 'not_found' }, 60_000, 60_000), { kind: 'repush' });
      assert.deepEqual(rulesQueryDecision({ kind: 'unknown', reason: '5xx' }, 1e9, 60_000), { kind: 'wait' });
      assert.deepEqual(
        rulesCallDecision({ kind: 'accepted', providerOrderId: 'CD3', status: 'succeeded', detail: {} }),
        {
          kind: 'confirm',
        },
      );
      assert.deepEqual(rulesCallDecision({ kind: 'rejected', reason: 'no' }), { kind: 'refused' });
      assert.deepEqual(rulesCallDecision({ kind: 'unknown', reason: '5xx' }), { kind: 'wait' });
    },
  );
  it('a re-push accepted in any other status, or not answered, waits', () => {
    const accepted = (status: string) =>
      rulesCallDecision({ kind: 'accepted', providerOrderId: 'CD4', status, detail: {} });
    assert.deepEqual(accepted('processing'), { kind: 'wait' });
    assert.deepEqual(accepted('failed'), { kind: 'wait' });
    assert.deepEqual(accepted('SANDBOX_UNKNOWN_STATUS'), { kind: 'wait' });
    assert.deepEqual(rulesCallDecision({ kind: 'timeout' }), { kind: 'wait' });
  });

  it('a status query that timed out waits, whatever the age', () => {
    assert.deepEqual(rulesQueryDecision({ kind: 'timeout' }, 1e9, 60_000), { kind: 'wait' });
    assert.deepEqual(rulesQueryDecision({ kind: 'not_found' }, 59_999, 60_000), { kind: 'wait' });
  });
});
