import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  decideOutcome,
  failingTooLong,
  isSuccessStatus,
  normaliseEventTypes,
  planFanOut,
  redeliverAction,
  subscribes,
  type FanOutEndpoint,
} from '../src/modules/webhooks/state.js';

/** The webhook delivery rules (src/modules/webhooks/state.ts): pure, no service. */

const schedule = [1_000, 5_000];

describe('webhook delivery state (pure)', () => {
  it('counts only 2xx as success', () => {
    assert.equal(isSuccessStatus(200), true);
    assert.equal(isSuccessStatus(299), true);
    assert.equal(isSuccessStatus(199), false);
    assert.equal(isSuccessStatus(300), false);
    assert.equal(isSuccessStatus(0), false);
  });

  it('sends on 2xx, retries per the schedule, then goes dead; 410 kills at once', () => {
    assert.deepEqual(decideOutcome({ kind: 'response', httpStatus: 204 }, 1, schedule, 500), {
      status: 'sent',
      attemptOutcome: 'sent',
      lastHttpStatus: 204,
      error: '',
      endpointGone: false,
    });
    assert.deepEqual(decideOutcome({ kind: 'response', httpStatus: 500 }, 1, schedule, 0), {
      status: 'failed',
      attemptOutcome: 'failed',
      retryInMs: 1_000,
      lastHttpStatus: 500,
      error: 'HTTP 500',
      endpointGone: false,
    });
    assert.equal(decideOutcome({ kind: 'response', httpStatus: 500 }, 2, schedule, 0).retryInMs, 5_000);
    const last = decideOutcome({ kind: 'response', httpStatus: 503 }, 3, schedule, 0);
    assert.equal(last.status, 'dead');
    assert.equal(last.endpointGone, false);
    const gone = decideOutcome({ kind: 'response', httpStatus: 410 }, 1, schedule, 0);
    assert.deepEqual([gone.status, gone.endpointGone, gone.retryInMs], ['dead', true, undefined]);
  });

  it('keeps the previous status when no response came, and marks refused targets apart', () => {
    const network = decideOutcome({ kind: 'network', error: 'ECONNRESET' }, 1, schedule, 502);
    assert.deepEqual(
      [network.status, network.attemptOutcome, network.lastHttpStatus, network.error],
      ['failed', 'failed', 502, 'ECONNRESET'],
    );
    const refused = decideOutcome({ kind: 'refused', reason: 'private_address' }, 1, schedule, 0);
    assert.deepEqual([refused.attemptOutcome, refused.error], ['refused', 'address refused: private_address']);
    assert.throws(() => decideOutcome({ kind: 'response', httpStatus: 500 }, 0, schedule, 0), RangeError);
  });

  it('disables an endpoint only once its streak reaches the window', () => {
    const since = new Date('2026-12-01T00:00:00Z');
    assert.equal(failingTooLong(null, new Date('2027-01-01T00:00:00Z'), 1_000), false);
    assert.equal(failingTooLong(since, new Date(since.getTime() + 999), 1_000), false);
    assert.equal(failingTooLong(since, new Date(since.getTime() + 1_000), 1_000), true);
  });

  it('redelivers dead and failed records, binds unsubscribed ones, refuses the rest', () => {
    assert.equal(redeliverAction('dead'), 'requeue');
    assert.equal(redeliverAction('failed'), 'requeue');
    assert.equal(redeliverAction('no_subscriber'), 'bind');
    assert.equal(redeliverAction('pending'), 'refuse');
    assert.equal(redeliverAction('sent'), 'refuse');
    assert.equal(redeliverAction('unknown'), 'refuse');
  });

  it('subscribes by exact type or `*`, never by prefix', () => {
    assert.equal(subscribes(['*'], 'deposit.credited'), true);
    assert.equal(subscribes(['deposit.credited'], 'deposit.credited'), true);
    assert.equal(subscribes(['deposit'], 'deposit.credited'), false);
    assert.equal(subscribes([], 'deposit.credited'), false);
  });

  it('normalises event types: `*` wins, duplicates go, bad and unknown types are named', () => {
    assert.deepEqual(normaliseEventTypes([]), { ok: false, reason: 'empty' });
    assert.deepEqual(normaliseEventTypes(['deposit.credited', '*']), { ok: true, types: ['*'] });
    assert.deepEqual(normaliseEventTypes(['deposit.credited', 'deposit.credited']), {
      ok: true,
      types: ['deposit.credited'],
    });
    assert.deepEqual(normaliseEventTypes(['Deposit.Credited']), {
      ok: false,
      reason: 'invalid_event_type',
      entry: 'Deposit.Credited',
    });
    assert.deepEqual(normaliseEventTypes(['deposit']), { ok: false, reason: 'invalid_event_type', entry: 'deposit' });
    assert.deepEqual(normaliseEventTypes(['deposit.no_such_thing']), {
      ok: false,
      reason: 'unknown_event_type',
      entry: 'deposit.no_such_thing',
    });
  });

  it('plans one record per subscribed endpoint as it was at the event, or one no_subscriber record', () => {
    const t0 = new Date('2026-12-01T00:00:00Z');
    const t1 = new Date('2026-12-01T01:00:00Z');
    const ev = (id: string, at: Date, merchant = 'mch_1') => ({
      id,
      merchant_id: merchant,
      environment: 'sandbox',
      type: 'deposit.credited',
      created_at: at,
    });
    const endpoints: FanOutEndpoint[] = [
      { id: 'whe_all', merchant_id: 'mch_1', environment: 'sandbox', status: 'enabled', event_types: ['*'] },
      {
        id: 'whe_off',
        merchant_id: 'mch_1',
        environment: 'sandbox',
        status: 'disabled',
        event_types: ['deposit.credited'],
      },
      // Enabled now, but created between the two events: the first event never reaches it.
      {
        id: 'whe_new',
        merchant_id: 'mch_1',
        environment: 'sandbox',
        status: 'enabled',
        event_types: ['deposit.credited'],
        changes: [{ valid_from: new Date(t0.getTime() + 1), prev_status: null, prev_event_types: null }],
      },
      // Disabled now, but enabled at the first event's time.
      {
        id: 'whe_was',
        merchant_id: 'mch_1',
        environment: 'sandbox',
        status: 'disabled',
        event_types: ['deposit.credited'],
        changes: [{ valid_from: new Date(t0.getTime() + 1), prev_status: 'enabled', prev_event_types: ['*'] }],
      },
    ];
    const plan = planFanOut([ev('evt_1', t0), ev('evt_2', t1), ev('evt_3', t0, 'mch_2')], endpoints);
    assert.deepEqual(
      plan.map((p) => `${p.eventId}>${p.endpointId}`),
      ['evt_1>whe_all', 'evt_1>whe_was', 'evt_2>whe_all', 'evt_2>whe_new', 'evt_3>null'],
    );
    assert.deepEqual(plan[4], {
      eventId: 'evt_3',
      eventType: 'deposit.credited',
      merchantId: 'mch_2',
      environment: 'sandbox',
      endpointId: null,
    });
  });
});
