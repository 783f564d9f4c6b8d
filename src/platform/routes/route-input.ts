import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ServiceContext } from '../../service-context.js';
import { claimWrite, executeWrite, sendReplay } from '../writes/idempotency.js';
import type { StoredResult } from '../queries/idempotency.js';
import { writeAlone, type BatchEffect } from '../writes/write-batch.js';
import { executeGroupedWrite } from '../writes/write-group.js';
import type { RouteAccess } from './route-access.js';
import type { Core } from './route-mount.js';
import type {
  AnyCommand,
  ClaimedWrite,
  Effect,
  MemberPrincipal,
  MerchantPrincipal,
  RouteSchema,
  Sent,
} from './route-types.js';
import { eachAlone } from '../writes/batch-answers.js';

type BatchCommit = NonNullable<AnyCommand['commitMany']>;

function principalOf(req: FastifyRequest, access: RouteAccess): MerchantPrincipal | MemberPrincipal | undefined {
  if (access.scope === 'public') return undefined;
  const auth = req.auth;
  // The onRequest hook authenticates every non-public route before its handler: a bug otherwise.
  if (!auth) throw new Error(`route: ${req.method} ${req.url} reached its handler without a principal`);
  const merchant: MerchantPrincipal = {
    merchantId: auth.merchantId,
    environment: auth.environment,
    keyId: auth.keyId,
    scopes: auth.scopes,
  };
  if (req.member) return { ...merchant, member: req.member, memberId: req.member.id };
  if (access.principal === 'member')
    throw new Error(`route: ${req.method} ${req.url} reached its handler without its member`);
  return merchant;
}

/** How long `once` holds a key: up to four outside calls in turn, each within the upstream deadline, and 10 s besides.
 * */
export const onceLeaseMs = (ctx: ServiceContext): number => 4 * ctx.config.upstreamCallTimeoutMs + 10_000;

/**
 * What a public route's handler receives. The parts are read from the request when the handler
 * asks for them (it destructures what it uses), and `write`, `claim` and `replay` are made only
 * then: building every part and three closures for each request was a measurable share of a
 * read's CPU. Read its parts by name (destructuring); a spread would not copy them.
 */
export class PublicRouteInput {
  constructor(
    readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly ctx: ServiceContext,
    private readonly access: RouteAccess,
    private readonly core: Core,
    private readonly batchEffects: WeakMap<NonNullable<AnyCommand['commitMany']>, BatchEffect>,
  ) {}

  get principal() {
    return principalOf(this.req, this.access);
  }
  get params() {
    return this.req.params;
  }
  get query() {
    return this.req.query;
  }
  get body() {
    return this.req.body;
  }
  get headers() {
    return this.req.headers;
  }
  get idempotency() {
    return this.req.idempotency;
  }

  get writeNow() {
    const { write, principal, ctx } = this;
    if (!principal) throw new Error('route: writeNow on a public route (no caller, no clock)');
    return (effect: (trx: Transaction<Database>, now: Date) => Promise<unknown>) =>
      write(async (trx) => effect(trx, await ctx.clock.now(trx, principal)));
  }

  get write() {
    const {
      req,
      reply,
      ctx,
      core: { status, mapped },
    } = this;
    return async (effect: Effect<unknown>) =>
      (await executeWrite(ctx.db, req, reply, async (trx) => ({
        status,
        body: await mapped(effect)(trx),
      }))) as unknown as Sent;
  }

  /**
   * Runs a command (`Command`): its plan, then its write through the group committer. Answers the
   * sent reply, or a claimed command's answer made after the commit, which `mount` sends.
   */
  async run(command: AnyCommand): Promise<Sent | unknown> {
    const {
      req,
      reply,
      ctx,
      core: { status, mapped },
      batchEffects,
    } = this;
    const plan = command.plan ? command.plan(this) : await command.prepare!(this);
    const many = command.commitMany ?? (command.claim ? claimedInBatch(command.claim) : undefined);
    let single: Effect<unknown>;
    let batch: { effect: BatchEffect; item: unknown; locksRowsFirst?: boolean } | undefined;
    if (many) {
      single = async (trx) => {
        const [answer] = await many(trx, [plan], { alone: true });
        if (answer === writeAlone) throw new Error('a batch effect answered writeAlone for a write already alone');
        if (answer instanceof Error) throw answer;
        return answer;
      };
      let effect = batchEffects.get(many);
      if (!effect) {
        effect = async (trx, plans) =>
          (await many(trx, plans, { alone: false })).map((a) =>
            a === writeAlone ? a : a instanceof Error ? (ctx.mapDomainError(a) ?? a) : { status, body: a },
          );
        batchEffects.set(many, effect);
      }
      batch = { effect, item: plan, ...(command.locksRowsFirst ? { locksRowsFirst: true } : {}) };
    } else {
      const one = command.commit ?? command.claim!.commit;
      single = (trx) => one(trx, plan);
    }
    const run = async (trx: Transaction<Database>) => ({ status, body: await mapped(single)(trx) });
    const claim = command.claim;
    const options = { ...(batch ? { batch } : {}), ...(claim ? { claimLeaseMs: claim.leaseMs } : {}) };
    const done = await executeGroupedWrite(
      ctx.db,
      ctx.writeGroup,
      ctx.config.groupCommitPartition,
      req,
      reply,
      run,
      options,
    );
    if (claim && 'claimed' in done) return claim.after(plan, done.claimed);
    return done as unknown as Sent;
  }

  get claim() {
    const {
      req,
      ctx,
      core: { mapped },
    } = this;
    return <T>(leaseMs: number, effect: Effect<T>) => claimWrite(ctx.db, req, leaseMs, mapped(effect));
  }

  get replay() {
    const reply = this.reply;
    return (stored: StoredResult) => sendReplay(reply, stored) as unknown as Sent;
  }

  get once() {
    const { req, reply, ctx } = this;
    return async <T>(work: () => Promise<T>): Promise<T | Sent> => {
      if (!req.idempotency) return work();
      const held = await claimWrite(ctx.db, req, onceLeaseMs(ctx), async () => undefined);
      if ('replay' in held) return sendReplay(reply, held.replay) as unknown as Sent;
      return work();
    };
  }
}

const claimedEffects = new WeakMap<ClaimedWrite<RouteSchema, unknown, unknown>, BatchCommit>();

/**
 * A claimed command's write as a batch effect (`eachAlone`): it joins the batch of the writes that
 * arrive with it, whatever their merchant, behind a savepoint of its own after the batch's merchant
 * locks (its freeze may be refused after its row is written); one function per command, so that
 * the group committer knows its writes as one route's.
 */
function claimedInBatch(claim: ClaimedWrite<RouteSchema, unknown, unknown>): BatchCommit {
  let many = claimedEffects.get(claim);
  if (!many) {
    many = eachAlone(claim.commit);
    claimedEffects.set(claim, many);
  }
  return many;
}
