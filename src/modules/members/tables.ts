import type { Generated } from 'kysely';
import type { Json, Timestamp, ScopedColumns } from '../../db/columns.js';

export interface MembersTable extends ScopedColumns {
  seq: Generated<bigint>;
  id: string;
  external_member_id: string;
  status: Generated<string>;
  kyc_level: Generated<number>;
  profile: Json<Record<string, unknown>>;
  sessions_revoked_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface MemberTables {
  members: MembersTable;
}
