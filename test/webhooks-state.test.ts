import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  decideClaim,
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
    const cases: Array<[string[], ReturnType<typeof normaliseEventTypes>]> = [
      [[], { ok: false, reason: 'empty' }],
      [['deposit.credited', '*'], { ok: true, types: ['*'] }],
      [['deposit.credited', 'deposit.credited'], { ok: true, types: ['deposit.credited'] }],
      [['Deposit.Credited'], { ok: false, reason: 'invalid_event_type', entry: 'Deposit.Credited' }],
      [['deposit'], { ok: false, reason: 'invalid_event_type', entry: 'deposit' }],
      [['deposit.no_such_thing'], { ok: false, reason: 'unknown_event_type', entry: 'deposit.no_such_thing' }],
    ];
    for (const [types, normalised] of cases) assert.deepEqual(normaliseEventTypes(types), normalised, String(types));
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

describe('delivery state machine', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(now.getTime() + ms);
  const rec = (
    over: Partial<{ status: string; generation: number; next_attempt_at: Date | null; lease_until: Date | null }> = {},
  ) => ({
    status: 'pending',
    generation: 0,
    next_attempt_at: now,
    lease_until: null,
    ...over,
  });

  it('claims only a due, unleased pending or failed record of the job generation, to an enabled endpoint', () => {
    assert.deepEqual(decideClaim(rec(), 'enabled', 0, now), { kind: 'attempt' });
    assert.deepEqual(decideClaim(rec({ status: 'failed' }), 'enabled', 0, now), { kind: 'attempt' });
    assert.deepEqual(decideClaim(undefined, 'enabled', 0, now), { kind: 'stale' });
    for (const status of ['sent', 'dead', 'no_subscriber', 'something_new'])
      assert.deepEqual(decideClaim(rec({ status }), 'enabled', 0, now), { kind: 'stale' }, status);
    assert.deepEqual(
      decideClaim(rec({ generation: 2 }), 'enabled', 1, now),
      { kind: 'stale' },
      'redelivered since: the old job does nothing',
    );
    assert.deepEqual(decideClaim(rec({ next_attempt_at: at(500) }), 'enabled', 0, now), { kind: 'wait', ms: 500 });
    assert.deepEqual(decideClaim(rec({ lease_until: at(1000) }), 'enabled', 0, now), { kind: 'wait', ms: 1010 });
    assert.deepEqual(
      decideClaim(rec({ lease_until: at(-1) }), 'enabled', 0, now),
      { kind: 'attempt' },
      'an expired lease (crashed attempt) is taken over',
    );
    assert.equal(decideClaim(rec(), 'disabled', 0, now).kind, 'endpoint_unavailable');
    assert.equal(decideClaim(rec(), 'deleted', 0, now).kind, 'endpoint_unavailable');
    assert.equal(decideClaim(rec(), undefined, 0, now).kind, 'endpoint_unavailable');
  });

  it('maps an attempt to sent, failed with the next delay, or dead', () => {
    const s = [50, 60];
    assert.deepEqual(decideOutcome({ kind: 'response', httpStatus: 204 }, 1, s, 0), {
      status: 'sent',
      attemptOutcome: 'sent',
      lastHttpStatus: 204,
      error: '',
      endpointGone: false,
    });
    assert.deepEqual(decideOutcome({ kind: 'response', httpStatus: 500 }, 1, s, 0), {
      status: 'failed',
      attemptOutcome: 'failed',
      retryInMs: 50,
      lastHttpStatus: 500,
      error: 'HTTP 500',
      endpointGone: false,
    });
    assert.equal(
      decideOutcome({ kind: 'response', httpStatus: 301 }, 2, s, 0).retryInMs,
      60,
      'redirects are not followed: a failure',
    );
    assert.deepEqual(decideOutcome({ kind: 'network', error: 'ECONNREFUSED' }, 3, s, 503), {
      status: 'dead',
      attemptOutcome: 'failed',
      lastHttpStatus: 503,
      error: 'ECONNREFUSED',
      endpointGone: false,
    });
    assert.equal(decideOutcome({ kind: 'refused', reason: 'private_address' }, 1, s, 0).attemptOutcome, 'refused');
    const gone = decideOutcome({ kind: 'response', httpStatus: 410 }, 1, s, 0);
    assert.equal(gone.status, 'dead');
    assert.equal(gone.endpointGone, true);
  });

  it('disables after the failing window, redelivers only dead, failed and no_subscriber', () => {
    assert.equal(failingTooLong(null, now, 1000), false);
    assert.equal(failingTooLong(at(-999), now, 1000), false);
    assert.equal(failingTooLong(at(-1000), now, 1000), true);
    assert.equal(redeliverAction('dead'), 'requeue');
    assert.equal(redeliverAction('failed'), 'requeue');
    assert.equal(redeliverAction('no_subscriber'), 'bind');
    for (const s of ['sent', 'pending', 'queued', '']) assert.equal(redeliverAction(s), 'refuse', s);
  });

  it('fans out to matching endpoints of the same merchant and environment, or one no_subscriber record', () => {
    const events = [
      { id: 'e1', merchant_id: 'm1', environment: 'sandbox', type: 'withdrawal.settled', created_at: now },
      { id: 'e2', merchant_id: 'm1', environment: 'production', type: 'withdrawal.settled', created_at: now },
      { id: 'e3', merchant_id: 'm2', environment: 'sandbox', type: 'deposit.credited', created_at: now },
    ];
    const endpoints = [
      { id: 'a', merchant_id: 'm1', environment: 'sandbox', status: 'enabled', event_types: ['*'] },
      { id: 'b', merchant_id: 'm1', environment: 'sandbox', status: 'enabled', event_types: ['withdrawal.settled'] },
      { id: 'c', merchant_id: 'm1', environment: 'sandbox', status: 'enabled', event_types: ['deposit.credited'] },
      { id: 'd', merchant_id: 'm2', environment: 'sandbox', status: 'enabled', event_types: ['withdrawal.settled'] },
      { id: 'x', merchant_id: 'm1', environment: 'sandbox', status: 'disabled', event_types: ['*'] },
    ];
    assert.deepEqual(
      planFanOut(events, endpoints).map((p) => `${p.eventId}:${p.endpointId}`),
      ['e1:a', 'e1:b', 'e2:null', 'e3:null'],
    );
    assert.ok(subscribes(['*'], 'qrpay.order.completed'));
    assert.deepEqual(normaliseEventTypes(['withdrawal.settled', 'withdrawal.settled', 'qrpay.order.completed']), {
      ok: true,
      types: ['withdrawal.settled', 'qrpay.order.completed'],
    });
    assert.deepEqual(normaliseEventTypes(['withdrawal.settled', '*']), { ok: true, types: ['*'] });
    assert.deepEqual(normaliseEventTypes([]), { ok: false, reason: 'empty' });
    for (const bad of ['withdrawal', 'Withdrawal.settled', 'withdrawal.', '.x', 'a.b-c', 'a..b']) {
      assert.deepEqual(normaliseEventTypes([bad]), { ok: false, reason: 'invalid_event_type', entry: bad }, bad);
    }
    for (const unknown of ['card.topup.credit', 'withdrawal.setled', 'thing.happened']) {
      assert.deepEqual(
        normaliseEventTypes(['deposit.credited', unknown]),
        { ok: false, reason: 'unknown_event_type', entry: unknown },
        unknown,
      );
    }
  });

  it(
    'judges each event by the endpoints as they were at its time: created, enabled, disabled, resubscribed or ' +
      'deleted after it',
    () => {
      const ev = (id: string, ms: number) => ({
        id,
        merchant_id: 'm1',
        environment: 'sandbox',
        type: 'deposit.credited',
        created_at: at(ms),
      });
      const endpoint = (id: string, status: string, event_types: string[]) => ({
        id,
        merchant_id: 'm1',
        environment: 'sandbox',
        status,
        event_types,
      });
      const change = (
        endpoint_id: string,
        ms: number,
        prev_status: string | null,
        prev_event_types: string[] | null,
      ) => ({ endpoint_id, valid_from: at(ms), prev_status, prev_event_types });
      const current = [
        endpoint('new', 'enabled', ['*']), // created at 100
        endpoint('woke', 'enabled', ['*']), // disabled until 200
        endpoint('slept', 'disabled', ['*']), // enabled until 300
        endpoint('widened', 'enabled', ['*']), // only withdrawals until 400
        endpoint('gone', 'deleted', []), // deleted at 500
        endpoint('old', 'enabled', ['deposit.credited']), // no change since the batch's oldest event
      ];
      const changes = [
        change('new', 100, null, null),
        change('woke', 200, 'disabled', ['*']),
        change('slept', 300, 'enabled', ['*']),
        change('widened', 400, 'enabled', ['withdrawal.settled']),
        change('gone', 500, 'enabled', ['deposit.credited']),
      ];
      const endpoints = current.map((e) => ({ ...e, changes: changes.filter((c) => c.endpoint_id === e.id) }));
      const plan = (ms: number) =>
        planFanOut([ev(`at${ms}`, ms)], endpoints)
          .map((p) => p.endpointId ?? 'no_subscriber')
          .join(' ');
      assert.equal(plan(50), 'slept gone old');
      assert.equal(plan(100), 'new slept gone old', "a change at the event's own time counts as before it");
      assert.equal(plan(150), 'new slept gone old');
      assert.equal(plan(250), 'new woke slept gone old');
      assert.equal(plan(350), 'new woke gone old');
      assert.equal(plan(450), 'new woke widened gone old');
      assert.equal(plan(600), 'new woke widened old');
      assert.equal(
        planFanOut([{ ...ev('w', 50), type: 'withdrawal.settled' }], endpoints)
          .map((p) => p.endpointId ?? 'no_subscriber')
          .join(' '),
        'slept widened',
      );
      assert.equal(
        planFanOut(
          [ev('none', 600)],
          endpoints.filter((e) => e.id === 'gone'),
        )
          .map((p) => p.endpointId ?? 'no_subscriber')
          .join(' '),
        'no_subscriber',
      );
    },
  );
});
