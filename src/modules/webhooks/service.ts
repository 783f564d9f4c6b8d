// Over 300 lines: a merchant's endpoints and their deliveries (redeliver, replay) share the endpoints' lock.
import type { Transaction } from 'kysely';
import type { Database, Environment, Db } from '../../db/schema.js';
import type { Config } from '../../platform/config/config.js';
import { ApiError, invalidFields, type ErrorCode } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { constantList } from '../../platform/routes/pagination.js';
import { keysetPage } from '../../db/keyset-page.js';
import { newSecret } from './signature.js';
import { allowsPrivateTargets, resolveTarget } from './ssrf.js';
import { normaliseEventTypes, redeliverAction, subscribes } from './state.js';
import { insertDeliveries, recordEndpointChange } from './queries/fan-out.js';
import {
  countLiveEndpoints,
  enabledEndpoints,
  findEndpoint,
  insertEndpoint,
  listLiveEndpoints,
  lockMerchantEndpoints,
  markEndpointDeleted,
  updateEndpointRow,
  type EndpointRow,
} from './queries/endpoints.js';
import {
  deliveriesQuery,
  lockDelivery,
  replayCandidates,
  requeueFailedSince,
  requeueForReplay,
  requeueRecord,
  type DeliveryRow,
} from './queries/deliveries.js';
import { iso } from '../../platform/dates.js';
import type { Caller } from '../../platform/caller.js';

/** The codes each function can answer (beyond invalid input): the routes declare these lists. */
export const webhookErrors = {
  createEndpoint: ['invalid_fields', 'limit_exceeded'],
  updateEndpoint: ['not_found', 'invalid_fields'],
  deleteEndpoint: ['not_found'],
  rollSecret: ['not_found'],
  redeliver: ['state_invalid', 'not_found'],
  replay: ['state_invalid', 'not_found', 'invalid_request'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** Live (not deleted) endpoints per merchant and environment. Bounds the fan-out: at most 20 records per event. */
export const endpointsPerMerchantMax = 20;
export const overlapSecondsDefault = 86_400;
export const overlapSecondsMax = 7 * 86_400;
/**
 * Records a single requeue call moves back to `pending`. One call is one transaction (about 0.4 s
 * for 1,000 on either database; the embedded one has a single connection), so larger backlogs take
 * several calls: the answer's `has_more` says so.
 */
export const requeueBatchMax = 1_000;
export const deliveryStatuses = ['pending', 'sent', 'failed', 'dead', 'no_subscriber'] as const;

export function endpointView(e: EndpointRow) {
  return {
    id: e.id,
    url: e.url,
    event_types: e.event_types,
    status: e.status,
    disabled_reason: e.disabled_reason,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
  };
}

export function deliveryView(d: DeliveryRow) {
  return {
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    last_http_status: d.last_http_status,
    next_attempt_at: d.next_attempt_at ? iso(d.next_attempt_at) : '',
    created_at: iso(d.created_at),
  };
}

/**
 * The URL check at save time: shape, then every address the host resolves to. Runs before the
 * write's transaction (a DNS lookup must not hold a database connection).
 */
export async function checkEndpointUrl(config: Config, environment: Environment, url: string): Promise<void> {
  const target = await resolveTarget(url, allowsPrivateTargets(config, environment));
  if (!target.ok) throw invalidFields([{ key: 'url', reason: target.reason }]);
}

function eventTypesOrThrow(input: readonly string[]): string[] {
  const checked = normaliseEventTypes(input);
  if (!checked.ok) {
    const fields = [{ key: 'event_types', reason: checked.reason }];
    if (checked.reason === 'unknown_event_type') {
      throw new ApiError(
        'invalid_fields',
        `Unknown event type "${checked.entry}" in event_types: use "*" or a type of the event catalogue (the ` +
          `webhooks of GET /v1/openapi.json).`,
        { fields, reason: 'validation_failed' },
      );
    }
    throw invalidFields(fields);
  }
  return checked.types;
}

/** `now`: the merchant's time (ctx.clock), as for every write below. */
export async function createEndpoint(
  trx: Transaction<Database>,
  caller: Caller,
  input: { url: string; event_types: string[] },
  now: Date,
) {
  const eventTypes = eventTypesOrThrow(input.event_types);
  await lockMerchantEndpoints(trx, caller);
  if ((await countLiveEndpoints(trx, caller)) >= endpointsPerMerchantMax) {
    throw new ApiError('limit_exceeded', `At most ${endpointsPerMerchantMax} webhook endpoints per environment.`);
  }
  const secret = newSecret();
  const row = await insertEndpoint(trx, {
    id: newId('whe'),
    merchant_id: caller.merchantId,
    environment: caller.environment,
    url: input.url,
    event_types: JSON.stringify(eventTypes),
    secret,
    previous_secret: null,
    previous_secret_expires_at: null,
    status: 'enabled',
    failing_since: null,
    created_at: now,
    updated_at: now,
  });
  await recordEndpointChange(trx, row, undefined);
  const view = endpointView(row);
  return {
    id: view.id,
    url: view.url,
    event_types: view.event_types,
    secret,
    status: view.status,
    created_at: view.created_at,
  };
}

export async function listEndpoints(db: Db, caller: Caller) {
  const rows = await listLiveEndpoints(db, caller, endpointsPerMerchantMax);
  return constantList(rows.map(endpointView));
}

/** Naturally idempotent: a repeat on an endpoint already deleted answers the same. The secret is wiped. */
export async function deleteEndpoint(trx: Transaction<Database>, caller: Caller, id: string, now: Date) {
  const row = await findEndpoint(trx, caller, id, true);
  if (!row) throw new ApiError('not_found', 'No such webhook endpoint.');
  if (row.status !== 'deleted') {
    await markEndpointDeleted(trx, row.id, now);
    await recordEndpointChange(trx, row, row);
  }
  return { id: row.id, deleted: true as const };
}

export async function updateEndpoint(
  trx: Transaction<Database>,
  caller: Caller,
  id: string,
  input: { status?: 'enabled' | 'disabled'; event_types?: string[]; url?: string },
  now: Date,
) {
  const row = await findEndpoint(trx, caller, id, true);
  if (!row || row.status === 'deleted') throw new ApiError('not_found', 'No such webhook endpoint.');
  const changes: Partial<{
    url: string;
    event_types: string;
    status: 'enabled' | 'disabled';
    disabled_reason: string;
    failing_since: null;
    updated_at: Date;
  }> = { updated_at: now };
  if (input.event_types !== undefined) changes.event_types = JSON.stringify(eventTypesOrThrow(input.event_types));
  if (input.url !== undefined) changes.url = input.url;
  if (input.status === 'enabled' && row.status !== 'enabled')
    Object.assign(changes, { status: 'enabled', disabled_reason: '', failing_since: null });
  if (input.status === 'disabled' && row.status !== 'disabled')
    Object.assign(changes, { status: 'disabled', disabled_reason: 'merchant' });
  const updated = await updateEndpointRow(trx, row.id, changes);
  if (updated.status !== row.status || JSON.stringify(updated.event_types) !== JSON.stringify(row.event_types))
    await recordEndpointChange(trx, row, row);
  return endpointView(updated);
}

/**
 * A new secret, shown once; the previous one keeps signing beside it for `overlapSeconds` of the
 * merchant's time (a sandbox merchant can advance its clock past the overlap). Only two are ever kept.
 */
export async function rollSecret(
  trx: Transaction<Database>,
  caller: Caller,
  id: string,
  overlapSeconds: number,
  at: Date,
) {
  const row = await findEndpoint(trx, caller, id, true);
  if (!row || row.status === 'deleted') throw new ApiError('not_found', 'No such webhook endpoint.');
  const secret = newSecret();
  const now = at.getTime();
  const expires = overlapSeconds > 0 ? new Date(now + overlapSeconds * 1000) : null;
  const updated = await updateEndpointRow(trx, row.id, {
    secret,
    previous_secret: expires ? row.secret : null,
    previous_secret_expires_at: expires,
    updated_at: new Date(now),
  });
  return { ...endpointView(updated), secret, previous_secret_expires_at: expires ? expires.toISOString() : '' };
}

export async function listDeliveries(
  db: Db,
  caller: Caller,
  query: { status?: string; limit?: number; cursor?: string },
) {
  const status = query.status ?? '';
  if (status !== '' && !(deliveryStatuses as readonly string[]).includes(status)) return constantList([]);
  return keysetPage(deliveriesQuery(db, caller, status as DeliveryRow['status'] | ''), query, deliveryView);
}

async function matchingEndpoints(trx: Transaction<Database>, caller: Caller, eventType: string) {
  const rows = await enabledEndpoints(trx, caller);
  return rows.filter((e) => subscribes(e.event_types, eventType));
}

/**
 * The reference's redeliver: dead/failed queued again (refused when their endpoint is disabled,
 * deleted, or no longer subscribes to the event's type); no_subscriber bound to today's endpoints
 * (refused when none matches); others refused.
 */
export async function redeliver(trx: Transaction<Database>, caller: Caller, rawId: string, now: Date) {
  const d = await lockDelivery(trx, caller, rawId);
  if (!d) throw new ApiError('not_found', 'No such webhook delivery.');
  const action = redeliverAction(d.status);
  if (action === 'refuse') throw new ApiError('state_invalid', `A ${d.status} delivery cannot be redelivered.`);
  if (action === 'requeue') {
    // A record of a disabled or deleted endpoint, or of one whose event_types no longer take its
    // type, would only go straight back to `dead` at its claim, without an attempt: refuse it, as
    // a no_subscriber record with no endpoint is.
    const endpoint = d.endpoint_id ? await findEndpoint(trx, caller, d.endpoint_id) : undefined;
    if (!endpoint || endpoint.status === 'deleted') {
      throw new ApiError('state_invalid', 'The endpoint of this delivery was deleted: it cannot be redelivered.');
    }
    if (endpoint.status !== 'enabled') {
      throw new ApiError(
        'state_invalid',
        `The endpoint of this delivery is ` +
          `disabled${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}: re-enable it (PATCH ` +
          `/v1/webhooks/endpoints/{id} {"status": "enabled"}) before redelivering.`,
      );
    }
    if (!subscribes(endpoint.event_types, d.event_type)) {
      throw new ApiError(
        'state_invalid',
        `The endpoint of this delivery no longer subscribes to ${d.event_type}: add it to the endpoint's ` +
          `event_types (PATCH /v1/webhooks/endpoints/{id}) before redelivering.`,
      );
    }
    await requeueRecord(trx, d.id, now);
  } else {
    const endpoints = await matchingEndpoints(trx, caller, d.event_type);
    if (endpoints.length === 0)
      throw new ApiError('state_invalid', 'No enabled endpoint subscribes to this event type.');
    await requeueRecord(trx, d.id, now, endpoints[0]!.id);
    const rest = endpoints.slice(1).map((e) => ({
      eventId: d.event_id,
      eventType: d.event_type,
      merchantId: d.merchant_id,
      environment: d.environment,
      endpointId: e.id,
    }));
    await insertDeliveries(trx, rest);
  }
  return { id: d.id, queued: true as const };
}

/** Every failed and/or dead record created since `since`, oldest first, at most `requeueBatchMax` per call. */
export async function requeueSince(
  trx: Transaction<Database>,
  caller: Caller,
  since: Date,
  status: 'failed' | 'dead' | undefined,
  now: Date,
) {
  const statuses = status ? [status] : ['failed', 'dead'];
  const queued = await requeueFailedSince(trx, caller, since, statuses, now, requeueBatchMax);
  return { queued, limit: requeueBatchMax };
}

/**
 * Events a replay queues per call at most, oldest first (one transaction). With `only_failed`
 * the same call again continues (what it queued is `pending`, no longer counted as failed).
 */
export const replayEventsMax = 5_000;

/**
 * Replay (extensions 11): a new delivery to this endpoint of every kept event created in
 * [`since`, `until`) (no `until`: up to now) that the endpoint subscribes to; with `onlyFailed`,
 * only those whose record for this endpoint is not `sent`. An event with a record for the
 * endpoint has that record queued again (a new generation, as redeliver does); one that had no
 * subscriber has its `no_subscriber` record bound to the endpoint (as redeliver does); one with
 * neither gets a new record. Records already `pending` are queued already: left, not counted.
 * Events not yet fanned out are left to the fan-out. Refused: an endpoint not `enabled`, or a
 * range longer than the retention (`state_invalid`).
 */
export async function replayEndpoint(
  trx: Transaction<Database>,
  caller: Caller,
  rawId: string,
  input: { since: string; until?: string; only_failed?: boolean },
  now: Date,
  retentionDays: number,
) {
  const endpoint = await findEndpoint(trx, caller, rawId, true);
  if (!endpoint || endpoint.status === 'deleted') throw new ApiError('not_found', 'No such webhook endpoint.');
  if (endpoint.status !== 'enabled') {
    throw new ApiError(
      'state_invalid',
      `The endpoint is disabled${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}: ` +
        `re-enable it (PATCH /v1/webhooks/endpoints/{id} {"status": "enabled"}) before replaying.`,
    );
  }
  const since = new Date(input.since);
  const until = input.until === undefined ? undefined : new Date(input.until);
  if (until && until.getTime() <= since.getTime())
    throw new ApiError('invalid_request', '`until` must be after `since`.');
  if ((until ?? now).getTime() - since.getTime() > retentionDays * 86_400_000) {
    throw new ApiError('state_invalid', `The range is longer than the ${retentionDays} days events are kept.`);
  }
  const onlyFailed = input.only_failed ?? true;
  const rows = await replayCandidates(trx, caller, endpoint, { since, until, onlyFailed }, replayEventsMax);
  const requeue = rows.filter((r) => r.record_id !== null).map((r) => r.record_id!);
  const bind = rows.filter((r) => r.record_id === null && r.unbound_id !== null).map((r) => r.unbound_id!);
  const fresh = rows.filter((r) => r.record_id === null && r.unbound_id === null);
  let queued = 0;
  if (requeue.length > 0 || bind.length > 0) {
    queued += await requeueForReplay(trx, endpoint.id, requeue, bind, now);
  }
  queued += await insertDeliveries(
    trx,
    fresh.map((r) => ({
      eventId: r.event_id,
      eventType: r.event_type,
      merchantId: caller.merchantId,
      environment: caller.environment,
      endpointId: endpoint.id,
    })),
  );
  return { id: endpoint.id, queued };
}
