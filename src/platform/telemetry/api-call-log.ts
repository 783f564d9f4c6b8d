import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { insertApiCalls, type ApiCallRecord } from '../queries/api-call-log.js';

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

  constructor(
    private readonly db: Kysely<Database>,
    private readonly onError: (err: unknown) => void,
  ) {}

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
          await this.db.executeQuery(insertApiCalls(batch));
        } catch (err) {
          this.onError(err);
        }
      }
    });
    return this.flushing;
  }
}
