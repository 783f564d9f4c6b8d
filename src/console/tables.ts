import type { ColumnType, Generated } from 'kysely';
import type { NullableTimestamp, Timestamp, ScopedColumns } from '../db/columns.js';

export type ConsoleRole = 'owner' | 'developer' | 'viewer';
export type ConsoleUserStatus = 'invited' | 'active' | 'disabled';

export interface ConsoleUsersTable {
  id: string;
  merchant_id: string;
  /** Lower case; one user per address across every merchant (the sign-in form asks for no merchant). */
  email: string;
  role: ConsoleRole;
  status: ConsoleUserStatus;
  /** `scrypt$N$r$p$salt$hash` (password.ts); null until the invite is accepted. */
  password_hash: string | null;
  invite_token_hash: string | null;
  invite_expires_at: NullableTimestamp;
  /** TOTP secret sealed with AES-256-GCM (totp.ts); null: no second factor. */
  totp_secret: string | null;
  /** A secret being set up, until the first code confirms it. */
  totp_pending_secret: string | null;
  /** The last 30-second step whose code was accepted (no code is accepted twice). */
  totp_last_step: ColumnType<string | null, string | number | null, string | number | null>;
  /** Completed sign-ins (migration 042): the two-step cookie is good for the generation it was made at only. */
  sign_in_generation: ColumnType<string, string | number | undefined, string | number>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface ConsoleSessionsTable {
  /** SHA-256 of the cookie's value: the database never holds a usable session. */
  token_hash: string;
  user_id: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
}

export interface ConsoleLoginFailuresTable {
  id: Generated<bigint>;
  email: string;
  client_ip: string;
  failed_at: Timestamp;
  /** The device cookie's hash when the attempt came from a browser known to the account (device.ts). */
  device_hash: string | null;
}

export interface ConsoleAuditTable extends ScopedColumns {
  seq: Generated<bigint>;
  id: string;
  user_id: string;
  user_email: string;
  action: string;
  object_id: Generated<string>;
  detail: Generated<string>;
  created_at: Timestamp;
}

export interface ConsoleRecoveryCodesTable {
  user_id: string;
  /** recovery.ts#recoveryCodeHash: SHA-256 of the user id and the code; the code itself is shown once. */
  code_hash: string;
  created_at: Timestamp;
  /** Set once, when the code signs in (a conditional update: a code is good once). */
  used_at: NullableTimestamp;
}

export interface ConsoleTables {
  console_users: ConsoleUsersTable;
  console_sessions: ConsoleSessionsTable;
  console_login_failures: ConsoleLoginFailuresTable;
  console_audit: ConsoleAuditTable;
  console_recovery_codes: ConsoleRecoveryCodesTable;
}
