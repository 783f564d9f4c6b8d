/** The shared provider-order lifecycle's pure rules (src/provider-orders/lifecycle.ts): an operator's resolve against
 * the provider's answer. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideOnQueryAnswer, resolveByOperator, type OpenOrderStatus } from '../src/provider-orders/lifecycle.js';
import type { StatusOutcome } from '../src/upstreams/port.js';

const graceMs = 60_000;

/** The resolution an operator's resolve meets when the provider answers `answer` about an order in `status`. */
function resolution(
  answer: StatusOutcome,
  order: { status?: OpenOrderStatus; upstreamOutcome?: 'accepted' | 'timeout' | 'unknown'; callAgeMs?: number } = {},
) {
  const decision = decideOnQueryAnswer(
    {
      status: order.status ?? 'processing',
      upstreamOutcome: order.upstreamOutcome ?? 'timeout',
      callAgeMs: order.callAgeMs ?? graceMs * 2,
    },
    answer,
    graceMs,
    'reversed',
  );
  return resolveByOperator(decision);
}

const found = (status: string): StatusOutcome => ({ kind: 'found', providerOrderId: 'P-1', status });

describe('operator resolve against the provider', () => {
  it(
    "applies the provider's outcome when it gives one: succeeded, failed, reversed, or never received past the " +
      'grace',
    () => {
      for (const [answer, kind] of [
        [found('succeeded'), 'complete'],
        [found('failed'), 'fail'],
        [found('refunded'), 'reversed'],
        [{ kind: 'not_found' }, 'fail'],
      ] as const) {
        const r = resolution(answer);
        assert.equal(r.kind, 'provider', JSON.stringify(answer));
        assert.equal(r.kind === 'provider' && r.decision.kind, kind);
      }
      const missing = resolution({ kind: 'not_found' });
      assert.equal(
        missing.kind === 'provider' && missing.decision.kind === 'fail' && missing.decision.reason,
        'upstream_not_found',
      );
    },
  );

  it('refuses while the provider reports the order in progress, suspended or not', () => {
    assert.deepEqual(resolution(found('processing')), { kind: 'in_progress', providerStatus: 'processing' });
    assert.deepEqual(resolution(found('processing'), { status: 'suspended', upstreamOutcome: 'accepted' }), {
      kind: 'in_progress',
      providerStatus: 'processing',
    });
  });

  it('leaves the decision to the operator when the provider cannot tell', () => {
    const cannotTell: [string, StatusOutcome, Parameters<typeof resolution>[1]][] = [
      ['no answer in time', { kind: 'timeout' }, {}],
      ['an error answer', { kind: 'unknown', reason: '503' }, {}],
      ['a status outside its list', found('WEIRD'), {}],
      [
        'the same unknown status on a suspended order',
        found('WEIRD'),
        { status: 'suspended', upstreamOutcome: 'accepted' },
      ],
      ['not found within the grace', { kind: 'not_found' }, { callAgeMs: graceMs - 1 }],
      ['not found after it had accepted the order', { kind: 'not_found' }, { upstreamOutcome: 'accepted' }],
    ];
    for (const [why, answer, order] of cannotTell)
      assert.deepEqual(resolution(answer, order), { kind: 'operator' }, why);
  });
});
