import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { Environment } from '../../db/schema.js';
import type { MemberResolver, ResolvedMember } from '../http/request-context.js';
import { NotifiedCache } from './notified-cache.js';

/** Members held per process; past this the oldest go (a miss costs one read). */
export const memberCacheEntriesMax = 50_000;

/**
 * How long after this process sent an update or delete of members its cache answers nothing:
 * the window from that statement to its commit and to the notification coming back. Members
 * change rarely (a suspension, a KYC level), so the cost is a few reads.
 */
export const ownMemberWriteBypassMs = 10_000;

/** The channel migration 027's triggers notify on every update or delete of members: the ids, or `*`. */
export const memberChangeChannel = 'mwa_member';

/**
 * The per-process copy of who `x-on-behalf-of` names (docs/performance.md, "Request pipeline and
 * the authenticated read"): per merchant, environment and the value sent (an id or an external id), the member's
 * id, external id, KYC level and status. Trusted, like the authentication cache, only while the
 * process listens to the database's notifications: every update or delete of members notifies the
 * ids it touched (migration 027) and each process forgets those members; `*` forgets everyone.
 * So a member suspended through any process is refused by every process as soon as the
 * notification arrives, exactly as a disabled key is.
 *
 * The process that makes the change must not wait for its own notification (the caller's next
 * request may come first): `memberWritesPlugin` sees every update or delete of members this
 * process sends and the cache answers nothing from then until `ownMemberWriteBypassMs` later,
 * which covers the commit and the notification's way back. A read that began before an
 * invalidation is never stored (generation check). Unknown members are not held.
 */
export class MemberCache extends NotifiedCache<ResolvedMember> {
  /** Member id → the keys that hold it. */
  private readonly keysOf = new Map<string, Set<string>>();
  /** Members this process changed (`ownWriteOf`) → until when (ms) they are neither answered nor stored. */
  private readonly bypassed = new Map<string, number>();

  constructor(private readonly clockMs: () => number = Date.now) {
    super(memberCacheEntriesMax, clockMs, ownMemberWriteBypassMs);
  }

  /**
   * This process is changing these members (an update or delete whose statement names them by id):
   * they are forgotten and set aside until their change has surely come back, the others stay
   * (`ownWrite`, which sets the whole cache aside, is for a change that names no ids). A read begun
   * before is not stored.
   */
  ownWriteOf(ids: readonly string[]): void {
    this.bumpGeneration();
    const now = this.clockMs();
    if (this.bypassed.size > 1_000) for (const [id, until] of this.bypassed) if (until <= now) this.bypassed.delete(id);
    for (const id of ids) {
      this.forget(id);
      this.bypassed.set(id, now + ownMemberWriteBypassMs);
    }
  }

  override put(key: string, member: ResolvedMember, generation: number): void {
    const until = this.bypassed.get(member.id);
    if (until !== undefined) {
      if (this.clockMs() < until) return;
      this.bypassed.delete(member.id);
    }
    super.put(key, member, generation);
  }

  /** Drops every key that holds the member. */
  private forget(id: string): void {
    const keys = this.keysOf.get(id);
    if (!keys) return;
    for (const key of keys) this.entries.delete(key);
    this.keysOf.delete(id);
  }

  static key(merchantId: string, environment: Environment, idOrExternal: string): string {
    return `${merchantId}\u0000${environment}\u0000${idOrExternal}`;
  }

  protected override stored(key: string, member: ResolvedMember): void {
    let keys = this.keysOf.get(member.id);
    if (!keys) this.keysOf.set(member.id, (keys = new Set()));
    keys.add(key);
  }

  protected override evict(key: string): void {
    const member = this.entries.get(key);
    this.entries.delete(key);
    if (!member) return;
    const keys = this.keysOf.get(member.id);
    keys?.delete(key);
    if (keys?.size === 0) this.keysOf.delete(member.id);
  }

  protected override cleared(): void {
    this.keysOf.clear();
  }

  /** A notification: the ids of the members that changed (comma-separated), or `*`. */
  onNotify(payload: string): void {
    if (payload === '*' || payload === '') {
      this.invalidate();
      return;
    }
    this.bumpGeneration();
    for (const id of payload.split(',')) this.forget(id);
  }
}

/** The on-behalf-of lookup through the cache: a hit costs no round trip, a miss reads and stores. */
export function cachedMemberResolver(resolve: MemberResolver, cache: MemberCache): MemberResolver {
  const resolver: MemberResolver = async (db, merchantId, environment, idOrExternal) => {
    const key = MemberCache.key(merchantId, environment, idOrExternal);
    const held = cache.get(key);
    if (held) return held;
    const generation = cache.begin();
    const row = await resolve(db, merchantId, environment, idOrExternal);
    if (!row) return undefined;
    const member: ResolvedMember = {
      id: row.id,
      external_member_id: row.external_member_id,
      kyc_level: row.kyc_level,
      status: row.status,
    };
    cache.put(key, member, generation);
    return member;
  };
  // The pipeline's synchronous look-up: a held member without a promise (undefined: ask `resolver`).
  resolver.held = (merchantId, environment, idOrExternal) =>
    cache.get(MemberCache.key(merchantId, environment, idOrExternal));
  return resolver;
}

/**
 * A Kysely plugin that tells the cache when this process sends an update or delete of members,
 * before the statement runs: of the members its WHERE names by id (`id = …` or `id IN (…)`, alone
 * or in an AND: `MemberCache.ownWriteOf`), or of any member (`ownWrite`) when it names none. Plain
 * inserts do not matter: an unknown member is never held.
 */
export function memberWritesPlugin(cache: MemberCache): KyselyPlugin {
  return {
    transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
      if ((node.kind === 'UpdateQueryNode' || node.kind === 'DeleteQueryNode') && touchesMembers(node)) {
        const ids = node.where ? idsNamedBy(node.where.where) : undefined;
        if (ids) cache.ownWriteOf(ids);
        else cache.ownWrite();
      }
      return node;
    },
    transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return Promise.resolve(result);
    },
  };
}

/** The table name of a table reference (`members`, or `members as m`). */
function tableName(node: unknown): string | undefined {
  const n = node as { kind?: string; node?: unknown; table?: { identifier?: { name?: string } } } | undefined;
  if (n?.kind === 'AliasNode') return tableName(n.node);
  return n?.kind === 'TableNode' ? n.table?.identifier?.name : undefined;
}

function touchesMembers(node: RootOperationNode): boolean {
  if (node.kind === 'UpdateQueryNode') return tableName(node.table) === 'members';
  if (node.kind === 'DeleteQueryNode') return node.from.froms.some((f) => tableName(f) === 'members');
  return false;
}

/**
 * The ids a WHERE condition limits the rows to: `id = <value>`, `id IN (<values>)`, or such a
 * condition in an AND; undefined when it names none (any row may change).
 */
function idsNamedBy(node: unknown): string[] | undefined {
  const n = node as {
    kind?: string;
    left?: unknown;
    right?: unknown;
    leftOperand?: unknown;
    operator?: unknown;
    rightOperand?: unknown;
  };
  if (n?.kind === 'AndNode') return idsNamedBy(n.left) ?? idsNamedBy(n.right);
  if (n?.kind === 'ParensNode') return idsNamedBy((n as { node?: unknown }).node);
  if (n?.kind !== 'BinaryOperationNode') return undefined;
  const left = n.leftOperand as { kind?: string; column?: { column?: { name?: string } } };
  const op = (n.operator as { operator?: string } | undefined)?.operator;
  if (left?.kind !== 'ReferenceNode' || left.column?.column?.name !== 'id') return undefined;
  const right = n.rightOperand as { kind?: string; value?: unknown; values?: unknown[] };
  if (op === '=' && right?.kind === 'ValueNode' && typeof right.value === 'string') return [right.value];
  if (op === 'in' && right?.kind === 'PrimitiveValueListNode' && right.values!.every((v) => typeof v === 'string'))
    return right.values as string[];
  if (op === 'in' && right?.kind === 'ValueListNode') {
    const values = (right.values as { kind?: string; value?: unknown }[]).map((v) =>
      v.kind === 'ValueNode' && typeof v.value === 'string' ? v.value : undefined,
    );
    if (values.every((v) => v !== undefined)) return values as string[];
  }
  return undefined;
}
