import type { ColumnType, Generated } from 'kysely';
import type { NullableTimestamp, Timestamp, ScopedColumns } from '../../db/columns.js';

export type EndpointStatus = 'enabled' | 'disabled' | 'deleted';
export type DeliveryStatus = 'pending' | 'sent' | 'failed' | 'dead' | 'no_subscriber';
export type AttemptOutcome = 'in_flight' | 'sent' | 'failed' | 'refused' | 'abandoned';

export interface WebhookEndpointsTable extends ScopedColumns {
  seq: Generated<bigint>;
  id: string;
  url: string;
  event_types: ColumnType<string[], string, string>;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: NullableTimestamp;
  status: EndpointStatus;
  disabled_reason: Generated<string>;
  failing_since: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

/** An endpoint's state before each change of its subscription (migration 044): the fan-out judges an event by the state
 * at its time. */
export interface WebhookEndpointChangesTable extends ScopedColumns {
  seq: Generated<bigint>;
  endpoint_id: string;
  valid_from: Timestamp;
  /** null: the change created the endpoint. */
  prev_status: EndpointStatus | null;
  prev_event_types: ColumnType<string[] | null, string | null, string | null>;
}

export interface WebhookDeliveriesTable extends ScopedColumns {
  seq: Generated<bigint>;
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string | null;
  status: DeliveryStatus;
  attempts: Generated<number>;
  round_attempts: Generated<number>;
  last_http_status: Generated<number>;
  last_error: Generated<string>;
  next_attempt_at: NullableTimestamp;
  generation: Generated<number>;
  lease_until: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface WebhookDeliveryAttemptsTable {
  id: Generated<bigint>;
  delivery_id: string;
  generation: number;
  attempt: number;
  outcome: Generated<AttemptOutcome>;
  http_status: Generated<number>;
  error: Generated<string>;
  started_at: Generated<Date>;
  finished_at: NullableTimestamp;
}

/** An event waiting for the fan-out (migration 053): queued by a trigger on `events`, deleted when fanned out. */
export interface WebhookFanOutQueueTable extends ScopedColumns {
  event_seq: bigint;
  event_id: string;
  type: string;
  created_at: Timestamp;
}

/** Tables of webhook endpoints and deliveries. */
export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_endpoint_changes: WebhookEndpointChangesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  webhook_fan_out_queue: WebhookFanOutQueueTable;
}
