/**
 * Payees (`POST/GET/PATCH/DELETE /v1/remit/payees`, `POST …/{id}/verify`): a member's links to
 * platform-level shared payees (docs/remittance.md, "Payees"). Creation makes no upstream call;
 * registration happens at an order's dispatch.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { ServiceContext } from '../../../service-context.js';
import { ApiError, invalidFields, type ErrorCode } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import { type PageParams } from '../../../platform/routes/pagination.js';
import { groupedKeysetPage } from '../../../db/keyset-page.js';
import { withDeadline } from '../../../upstreams/deadline.js';
import { accountIdentifierOf, holderNameOf, readFields, type FieldSpec } from '../corridors/contracts.js';
import { corridorById, findCorridors, type Corridor } from '../corridors/queries.js';
import { accountFingerprint, holderFingerprint } from './fingerprints.js';
import {
  activeLinkSeq,
  activePayeesQuery,
  entitiesByIds,
  entityById,
  entityFor,
  findActivePayee,
  findOwnPayee,
  linkPayee,
  markUnlinked,
  payeeIdsOf,
  recordNameCheck,
  updateLinkSettings,
  type Db,
  type MemberCaller,
} from './queries.js';
import { corridorRefusal, payeeRefusal } from '../corridors/rules.js';
import type { NameCheckResult, PayeeOutcome, PayeeRow } from './tables.js';
import { accountMaskOf, payeeView } from './views.js';
import { nicknameOf, segmentsOf, type PayeeInput, type Segments } from './requests.js';
import { ownerColumns } from '../../../db/owned-by.js';

/** The codes each function can answer (beyond invalid input): the routes declare these lists. */
export const payeeErrors = {
  create: ['invalid_fields', 'corridor_not_supported'],
  get: ['not_found'],
  update: ['invalid_fields', 'not_found'],
  unlink: ['not_found'],
  verify: ['not_found'],
} as const satisfies Record<string, readonly ErrorCode[]>;

/** The corridor of the segments, usable for the entity type, with its contract; or the reference's refusal. */
export async function usableCorridor(
  db: Db,
  environment: MemberCaller['environment'],
  s: Segments,
): Promise<{ corridor: Corridor; contract: FieldSpec[] }> {
  const candidates = await findCorridors(db, environment, {
    country: s.country,
    currency: s.currency,
    paymentMethod: s.paymentMethod,
  });
  if (candidates.length === 0)
    throw new ApiError(
      'corridor_not_supported',
      `No corridor serves ${s.country} / ${s.currency} / ${s.paymentMethod}.`,
    );
  const corridor = candidates.find((c) => c.clearingSystem === s.clearingSystem);
  if (!corridor) throw invalidFields([{ key: 'clearing_system', reason: 'unknown_clearing_system' }]);
  const contract = corridor.contracts[s.entityType];
  const refusal = corridorRefusal(corridor.policy, contract);
  if (refusal) throw new ApiError('corridor_not_supported', `The corridor cannot be served (${refusal}).`);
  return { corridor, contract: contract! };
}

/** POST /v1/remit/payees: creates or links the shared payee for the member; outcome created / linked / review. */
/** `now`: the merchant's clock. */
export async function createPayee(trx: Transaction<Database>, caller: MemberCaller, input: PayeeInput, now: Date) {
  const segments = segmentsOf(input);
  const { corridor, contract } = await usableCorridor(trx, caller.environment, segments);
  const rawFields =
    input.fields !== null && typeof input.fields === 'object' && !Array.isArray(input.fields)
      ? (input.fields as Record<string, unknown>)
      : {};
  const read = readFields(contract, rawFields, { country: corridor.country });
  if (read.problems.length > 0) throw invalidFields(read.problems);
  const refusal = payeeRefusal(corridor.policy, contract, read.values, corridor.country);
  if (refusal) throw new ApiError('corridor_not_supported', `The corridor cannot serve this payee (${refusal}).`);

  const holderName = holderNameOf(read.values);
  const holderFp = holderFingerprint(holderName);
  const { entity, created } = await entityFor(trx, {
    id: newId('ben'),
    environment: caller.environment,
    fingerprint: accountFingerprint(segments, accountIdentifierOf(contract, read.values)),
    country: corridor.country,
    currency: corridor.currency,
    payment_method: corridor.paymentMethod,
    clearing_system: corridor.clearingSystem,
    entity_type: segments.entityType,
    fields: JSON.stringify(read.values),
    holder_name: holderName,
    holder_fingerprint: holderFp,
    account_mask: accountMaskOf(contract, read.values),
    provider_payee_ref: null,
    registered_at: null,
  });
  const outcome: PayeeOutcome = created ? 'created' : entity.holder_fingerprint === holderFp ? 'linked' : 'review';
  const nickname = nicknameOf(input.nickname) ?? null;
  // One active link per member and payee (linkPayee); a review is recorded on the link the member already has.
  const linked = await linkPayee(
    trx,
    {
      ...ownerColumns(caller),
      entity_id: entity.id,
      corridor_id: corridor.id,
      entity_type: segments.entityType,
      status: 'active',
      outcome,
      name_mismatch: outcome === 'review',
      holder_name: holderName,
      fields: JSON.stringify(read.values),
      original_fields: JSON.stringify(read.original),
      nickname,
      name_check: null,
      name_check_suggestion: null,
      name_checked_at: null,
      // The merchant's clock, as updated_at (the column's default would be the database's real time).
      created_at: now,
      updated_at: now,
      unlinked_at: null,
    },
    outcome === 'review',
    now,
  );
  // Nothing inserted or updated: the member's link exists (and already records any mismatch).
  const seq = linked ?? (await activeLinkSeq(trx, caller.memberId, entity.id));
  return { id: (await payeeIdsOf(trx)).idOf(seq), outcome, status: 'active' as const };
}

async function fullView(db: Db, link: PayeeRow) {
  const entity = await entityById(db, link.entity_id);
  const corridor = await corridorById(db, link.corridor_id);
  return payeeView(await payeeIdsOf(db), link, entity, corridor?.contracts[link.entity_type] ?? []);
}

export async function getPayee(db: Db, caller: MemberCaller, id: string) {
  const link = await findActivePayee(db, caller, id);
  if (!link) throw new ApiError('not_found', 'No such payee.');
  return fullView(db, link);
}

/**
 * The member's payees: favourites first, then newest (grouped keyset walk). The cursor carries
 * the last link's public number, not its sequence (which the ids keep private).
 */
export async function listPayees(db: Db, caller: MemberCaller, page: PageParams) {
  const ids = await payeeIdsOf(db);
  const cursorSeq = { encode: ids.numberOf, decode: ids.seqOfNumber };
  const links = await groupedKeysetPage(
    activePayeesQuery(db, caller),
    'favorite',
    (r) => r.favorite,
    page,
    (r) => r,
    cursorSeq,
  );
  const entities = await entitiesByIds(
    db,
    links.data.map((l) => l.entity_id),
  );
  const contracts = new Map<string, Corridor | undefined>();
  for (const id of new Set(links.data.map((l) => l.corridor_id))) contracts.set(id, await corridorById(db, id));
  return {
    ...links,
    data: links.data.map((l) =>
      payeeView(ids, l, entities.get(l.entity_id)!, contracts.get(l.corridor_id)?.contracts[l.entity_type] ?? []),
    ),
  };
}

/** PATCH: only the private nickname (64, empty clears) and the favourite flag. */
export async function updatePayee(
  trx: Transaction<Database>,
  caller: MemberCaller,
  id: string,
  body: { nickname?: string; favorite?: boolean },
  now: Date,
) {
  if (body.nickname === undefined && body.favorite === undefined) {
    throw invalidFields(
      [
        { key: 'nickname', reason: 'required' },
        { key: 'favorite', reason: 'required' },
      ],
      'nothing_to_update',
    );
  }
  const link = await findActivePayee(trx, caller, id);
  if (!link) throw new ApiError('not_found', 'No such payee.');
  const row = await updateLinkSettings(trx, link.seq, {
    ...(body.nickname !== undefined ? { nickname: nicknameOf(body.nickname) ?? null } : {}),
    ...(body.favorite !== undefined ? { favorite: body.favorite } : {}),
    updated_at: now,
  });
  if (!row) throw new ApiError('not_found', 'No such payee.');
  return { id: (await payeeIdsOf(trx)).idOf(row.seq), nickname: row.nickname ?? '', favorite: row.favorite };
}

/** DELETE: unlinks (naturally idempotent: a repeat answers the same); the shared payee stays. */
export async function unlinkPayee(trx: Transaction<Database>, caller: MemberCaller, id: string, now: Date) {
  const link = await findOwnPayee(trx, caller, id);
  if (!link) throw new ApiError('not_found', 'No such payee.');
  if (link.status === 'active') {
    await markUnlinked(trx, link.seq, now);
  }
  return { id: (await payeeIdsOf(trx)).idOf(link.seq), status: 'unlinked' as const };
}

/**
 * POST /v1/remit/payees/{id}/verify: the holder name checked with the provider (read-only,
 * moves no money, not affected by sandbox injection). A provider that cannot answer in time is
 * `unavailable` too. The result is kept on the member's link.
 */
export async function verifyPayee(ctx: ServiceContext, caller: MemberCaller, id: string) {
  const link = await findActivePayee(ctx.db, caller, id);
  if (!link) throw new ApiError('not_found', 'No such payee.');
  const entity = await entityById(ctx.db, link.entity_id);
  const answer = await withDeadline(ctx.config.upstreamCallTimeoutMs, () =>
    ctx.upstreams.remittance.checkName(caller, {
      country: entity.country,
      currency: entity.currency,
      paymentMethod: entity.payment_method,
      clearingSystem: entity.clearing_system,
      entityType: link.entity_type,
      holderName: link.holder_name,
      fields: link.fields,
    }),
  );
  const result: NameCheckResult =
    answer.kind === 'match' || answer.kind === 'close_match' || answer.kind === 'no_match'
      ? answer.kind
      : 'unavailable';
  const suggested = answer.kind === 'close_match' ? answer.suggestedName : null;
  const checkedAt = await ctx.clock.now(ctx.db, caller);
  await recordNameCheck(ctx.db, link.seq, {
    name_check: result,
    name_check_suggestion: suggested,
    name_checked_at: checkedAt,
    updated_at: checkedAt,
  });
  return {
    id: (await payeeIdsOf(ctx.db)).idOf(link.seq),
    result,
    suggested_name: suggested,
    checked_at: checkedAt.toISOString(),
  };
}
