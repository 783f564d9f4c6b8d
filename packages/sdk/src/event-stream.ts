/**
 * The live event stream (`GET /v1/events/stream`, server-sent events) as an async iterator that
 * survives dropped connections: each reconnection sends `Last-Event-ID` with the id of the last
 * event handed to the caller, and the server resumes after it (the events kept are replayed
 * first), so that no event is lost or repeated.
 */

import { setTimeout as wait } from 'node:timers/promises';
import { MerchantWalletAbortError, MerchantWalletConnectionError, MerchantWalletError } from './errors.js';
import { decideRetry, retryAfterMs } from './retry.js';
import type { StreamRequestOptions } from './request-options.js';
import type { OpenedStream } from './transport.js';
import type { ApiEvent } from './webhook-types.js';

/** One message of a `text/event-stream` body, as the HTML standard's parser dispatches it. */
export interface SseMessage {
  /** The last event ID buffer when the message was dispatched (`id:` lines persist across messages). */
  id: string | undefined;
  /** `event:`, or `message` when the message had none. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/**
 * An incremental `text/event-stream` parser (HTML standard, "Interpreting an event stream"):
 * lines end with CRLF, LF or CR; `:` starts a comment (the server's keep-alive); a blank line
 * dispatches the message; `retry:` sets the reconnection delay. Feed it decoded text in any pieces.
 */
export class SseParser {
  /** The server's `retry:` value (ms), if it sent one. */
  retry: number | undefined;
  private pending = '';
  private skipLf = false;
  private data: string[] = [];
  private event = '';
  private lastId: string | undefined;

  constructor(lastEventId?: string) {
    this.lastId = lastEventId;
  }

  push(text: string): SseMessage[] {
    const out: SseMessage[] = [];
    let s = this.pending + text;
    if (this.skipLf && s.startsWith('\n')) s = s.slice(1);
    this.skipLf = false;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(s.slice(start, i), out);
      if (c === '\r') {
        if (i + 1 === s.length) this.skipLf = true;
        else if (s[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.pending = s.slice(start);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.data.length > 0)
        out.push({ id: this.lastId, event: this.event || 'message', data: this.data.join('\n') });
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id') {
      if (!value.includes('\0')) this.lastId = value;
    } else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }
}

export interface EventStreamOptions {
  /** An exact event type, or a prefix ending in `.*` (`card.*`); default every event. */
  type?: string;
  /** Resume after this event (`Last-Event-ID`): the events kept after it come first. Default: only new events. */
  lastEventId?: string;
  /** Ends the iteration (without an error) when it aborts; `close()` does the same. */
  signal?: AbortSignal;
  /** Reconnect after a dropped connection or a retryable refusal (5xx, 429, network). Default true. */
  reconnect?: boolean;
  /**
   * First delay before reconnecting, ms (the server's `retry:` wins). Default 1000. Doubled after each failed attempt.
   */
  reconnectDelayMs?: number;
  /** Longest delay between attempts, ms. Default 30000. */
  maxReconnectDelayMs?: number;
  /** Longest silence of an open stream before it counts as broken, ms. Default 45000. */
  idleTimeoutMs?: number;
  /** Called each time the stream is open (`reconnects` is 0 the first time). */
  onOpen?: (info: { lastEventId: string | undefined; reconnects: number }) => void;
  /** Called when the connection dropped or an attempt failed, before waiting `delayMs` to reconnect. */
  onDisconnect?: (info: { error: unknown; lastEventId: string | undefined; delayMs: number }) => void;
}

/** What the stream needs from the client. */
export interface StreamHost {
  openStream(opts: StreamRequestOptions): Promise<OpenedStream>;
}

/** How many recent event ids are remembered to drop a repeat (a server that resumed too early). */
const SEEN_MAX = 1000;

/**
 * `client.events.stream()`: iterate with `for await`; each item is an event object (the webhook
 * body). Breaking out of the loop, `close()` or the signal closes the connection.
 */
export class EventStream implements AsyncIterable<ApiEvent> {
  private last: string | undefined;
  private readonly closer = new AbortController();
  private readonly seen = new Set<string>();
  private started = false;

  constructor(
    private readonly host: StreamHost,
    private readonly path: string,
    private readonly opts: EventStreamOptions = {},
  ) {
    this.last = opts.lastEventId;
  }

  /** The id of the last event handed out (what a reconnection resumes after). */
  get lastEventId(): string | undefined {
    return this.last;
  }

  /** Closes the connection; a waiting `for await` ends. */
  close(): void {
    this.closer.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<ApiEvent> {
    if (this.started) throw new TypeError('an EventStream can be iterated once');
    this.started = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<ApiEvent, void, undefined> {
    const signal = this.opts.signal ? AbortSignal.any([this.opts.signal, this.closer.signal]) : this.closer.signal;
    const baseDelay = this.opts.reconnectDelayMs ?? 1000;
    const maxDelay = this.opts.maxReconnectDelayMs ?? 30_000;
    let failures = 0;
    let opens = 0;
    let serverRetry: number | undefined;
    for (;;) {
      if (signal.aborted) return;
      let opened: OpenedStream | undefined;
      let error: unknown;
      try {
        opened = await this.host.openStream({
          path: this.path,
          query: { type: this.opts.type },
          headers: { 'last-event-id': this.last },
          signal,
          idleTimeoutMs: this.opts.idleTimeoutMs,
        });
      } catch (err) {
        if (signal.aborted || err instanceof MerchantWalletAbortError) return;
        const decision = decideRetry(err);
        const unavailable = err instanceof MerchantWalletError && err.status === 503;
        if (this.opts.reconnect === false || (!decision.retry && !unavailable)) throw err;
        error = err;
      }
      let retryAfter: number | undefined = error instanceof MerchantWalletError ? retryAfterMs(error) : undefined;
      if (opened) {
        this.opts.onOpen?.({ lastEventId: this.last, reconnects: opens++ });
        failures = 0;
        const parser = new SseParser(this.last);
        const decoder = new TextDecoder();
        const body = opened.body;
        try {
          for await (const chunk of body as AsyncIterable<Buffer>) {
            for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
              const event = this.accept(message);
              if (event) yield event;
            }
          }
          error = new MerchantWalletConnectionError(`the server ended the event stream ${this.path}`, 'ECONNRESET');
        } catch (err) {
          if (signal.aborted) return;
          const e = err as NodeJS.ErrnoException;
          const errno = typeof e?.code === 'string' ? e.code : 'ECONNRESET';
          error =
            err instanceof MerchantWalletError
              ? err
              : new MerchantWalletConnectionError(
                  `${errno} while reading the event stream ${this.path}: ${e?.message ?? String(err)}`,
                  errno,
                  err,
                );
        } finally {
          body.destroy();
        }
        serverRetry = parser.retry ?? serverRetry;
        retryAfter = undefined;
      }
      if (this.opts.reconnect === false) throw error;
      const delayMs = retryAfter ?? Math.min(maxDelay, (serverRetry ?? baseDelay) * 2 ** failures);
      failures++;
      this.opts.onDisconnect?.({ error, lastEventId: this.last, delayMs });
      try {
        await wait(delayMs, undefined, { signal });
      } catch {
        return;
      }
    }
  }

  /** The event a message carries, or undefined (not an event, or one already handed out). */
  private accept(message: SseMessage): ApiEvent | undefined {
    let event: ApiEvent;
    try {
      event = JSON.parse(message.data) as ApiEvent;
    } catch {
      return undefined;
    }
    const id = message.id ?? (event as { event_id?: string }).event_id;
    if (id !== undefined) {
      if (this.seen.has(id)) return undefined;
      this.seen.add(id);
      if (this.seen.size > SEEN_MAX) this.seen.delete(this.seen.values().next().value as string);
      this.last = id;
    }
    return event;
  }
}
