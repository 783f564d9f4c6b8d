import { Type } from 'typebox';

/** Schema fragments of the list routes' filters that mean the same in every area that takes them. */

/** A member named by either of its ids (members/queries.ts `resolveMember`). */
export const MemberRef = Type.String({ minLength: 1, maxLength: 100, description: 'mem_<uuid> or external_member_id' });

/**
 * The filters of a list of one member's money records: `member_id` (either id), `asset`, and a
 * creation time range, `created_gte` inclusive and `created_lt` exclusive.
 */
export const MemberAssetCreatedFilter = {
  member_id: Type.Optional(MemberRef),
  asset: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9]{2,16}$' })),
  created_gte: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after (ISO 8601)' })),
  created_lt: Type.Optional(Type.String({ format: 'date-time', description: 'created before (ISO 8601)' })),
};
