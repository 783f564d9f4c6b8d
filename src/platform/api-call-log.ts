import type { Kysely } from 'kysely';
import type { Database, Environment } from '../db/schema.js';

export interface ApiCallRecord {
  merchant_id: string;
  environment: Environment;
  request_id: string;
  method: string;
  path: string;
  status_code: number;
  duration_ms: number;
}

const flushIntervalMs = 200;
const batchSizeMax = 500;
const bufferSizeMax = 10_000;

/**
 * The per-request API call log. Records are buffered and written in batches off the request path,
 * so logging costs a request one array push rather than one INSERT.
 */
export class ApiCallLog {
  private buffer: ApiCallRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Kysely<Database>, private readonly onError: (err: unknown) => void) {}

  record(entry: ApiCallRecord): void {
    if (this.buffer.length >= bufferSizeMax) return;
    this.buffer.push(entry);
    this.timer ??= setTimeout(() => void this.flush(), flushIntervalMs);
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(async () => {
      while (this.buffer.length > 0) {
        const batch = this.buffer.splice(0, batchSizeMax);
        try {
          await this.db.insertInto('api_call_logs').values(batch).execute();
        } catch (err) {
          this.onError(err);
        }
      }
    });
    return this.flushing;
  }
}
