import type { Timestamp, ScopedColumns } from '../../db/columns.js';

/** An open event stream (migration 046): the per-key bound, held across processes by a lease. */
export interface EventStreamsTable extends ScopedColumns {
  id: string;
  key_id: string;
  opened_at: Timestamp;
  lease_until: Timestamp;
}

export interface EventTables {
  event_streams: EventStreamsTable;
}
