/** Events: the list and one event (kept `EVENT_RETENTION_DAYS`, 30 by default), and the live stream. */
import { EventStream, type EventStreamOptions } from '../event-stream.js';
import type { ApiEvent } from '../types.js';
import { seg, isoTime, type ResourceHost } from './shared.js';

export interface EventListFilters {
  /** An exact event type, or a prefix ending in `.*` (`card.*`); an unknown type gives nothing. */
  type?: string;
  /** `data.id`: the events of one object. */
  object_id?: string;
  /** Created at or after (inclusive). */
  created_gte?: string | Date;
  /** Created before (exclusive). */
  created_lt?: string | Date;
  /** `true`: every delivery record of the event is `sent`; `false`: at least one is `failed`, `dead` or
   * `no_subscriber`. */
  delivery_success?: boolean;
}

export interface EventsResource {
  /** GET /v1/events, every page, newest first (`limit` is the page size). Scope `events:read`. */
  list(opts?: EventListFilters & { limit?: number }): AsyncIterable<ApiEvent>;
  /** GET /v1/events/{id}: one event (`evt_` prefix optional). */
  get(id: string): Promise<ApiEvent>;
  /**
   * GET /v1/events/stream: the merchant's new events as they are written, as an async iterator
   * that reconnects by itself and resumes after the last event it handed out (`Last-Event-ID`),
   * so that a dropped connection neither loses nor repeats an event. Pass `lastEventId` to resume
   * an earlier stream.
   */
  stream(opts?: EventStreamOptions): EventStream;
}

export function createEventsResource(host: ResourceHost): EventsResource {
  return {
    list: (opts) =>
      host.paginate<ApiEvent>('/v1/events', {
        query: {
          type: opts?.type,
          object_id: opts?.object_id,
          created_gte: isoTime(opts?.created_gte),
          created_lt: isoTime(opts?.created_lt),
          delivery_success: opts?.delivery_success === undefined ? undefined : String(opts.delivery_success),
        },
        limit: opts?.limit,
      }),
    get: (id) => host.request<ApiEvent>({ method: 'GET', path: `/v1/events/${seg(id)}` }),
    stream: (opts) => new EventStream(host, '/v1/events/stream', opts),
  };
}
