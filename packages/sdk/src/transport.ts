/**
 * HTTP transport: exactly one HTTP exchange per `send` call (no retries, no signing).
 * Uses node:http / node:https with a keep-alive agent per client.
 */

import * as http from 'node:http';
import * as https from 'node:https';
import type { ResolvedConfig } from './config.js';
import { MerchantWalletAbortError, MerchantWalletConnectionError, type ResponseHeaders } from './errors.js';

export interface OutgoingRequest {
  method: string;
  /** Path with query string exactly as it goes on the request line. */
  path: string;
  /** Final, lower-case header map. */
  headers: Record<string, string>;
  /** Exact body bytes (undefined: no body). */
  body?: Buffer;
  /** This attempt's timeout (connect + request + full response), ms. */
  timeoutMs: number;
  /** Cancels the attempt: it rejects with `MerchantWalletAbortError` and the socket is destroyed. */
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  headers: ResponseHeaders;
  /** Parsed JSON when the body is JSON, the text when it is not, undefined when empty. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  rawBody: string;
}

/** A response whose body is read as it arrives (server-sent events): `openStream` on a 2xx answer. */
export interface OpenedStream {
  kind: 'stream';
  status: number;
  headers: ResponseHeaders;
  /**
   * The body's bytes as they arrive. It ends when the server ends the response, and errors
   * (`ETIMEDOUT`) when nothing arrived for the request's `idleTimeoutMs`, or when the connection
   * breaks. `destroy()` closes the connection.
   */
  body: http.IncomingMessage;
}

/** A connection error on a kept-alive socket that the server closed while idle. */
export class StaleSocketError extends MerchantWalletConnectionError {}

export function parseBody(rawBody: string): unknown {
  if (rawBody.length === 0) return undefined;
  try {
    return JSON.parse(rawBody) as unknown;
  } catch {
    return rawBody;
  }
}

export class HttpTransport {
  private readonly agent: http.Agent;
  private readonly cfg: ResolvedConfig;

  constructor(cfg: ResolvedConfig) {
    this.cfg = cfg;
    this.agent =
      cfg.protocol === 'https:'
        ? new https.Agent({ keepAlive: true, servername: cfg.servername })
        : new http.Agent({ keepAlive: true });
  }

  /** Destroys pooled sockets. The client may still be used afterwards (new sockets are opened). */
  close(): void {
    this.agent.destroy();
  }

  /**
   * One request whose 2xx answer is handed over unread, as a stream (its own connection, not
   * pooled: it stays open as long as the server keeps sending). `out.timeoutMs` bounds the wait
   * for the answer's head; afterwards `idleTimeoutMs` bounds each silence of the body. A non-2xx
   * answer is read whole and resolved as `send` would.
   */
  openStream(
    out: OutgoingRequest & { idleTimeoutMs: number },
  ): Promise<OpenedStream | (RawResponse & { kind: 'response' })> {
    const cfg = this.cfg;
    const options: https.RequestOptions = {
      protocol: cfg.protocol,
      host: cfg.connectHost,
      port: cfg.port,
      method: out.method,
      path: out.path,
      headers: out.headers,
      agent: false,
    };
    if (cfg.protocol === 'https:' && cfg.servername) options.servername = cfg.servername;
    const mod = cfg.protocol === 'https:' ? https : http;
    const signal = out.signal;
    if (signal?.aborted)
      return Promise.reject(new MerchantWalletAbortError(signal.reason, `before ${out.method} ${out.path} was sent`));
    const where = `${out.method} ${cfg.protocol}//${cfg.connectHost}:${cfg.port}${out.path}`;

    return new Promise((resolve, reject) => {
      let settled = false;
      const req = mod.request(options);
      const onAbort = (): void => {
        const err = new MerchantWalletAbortError(signal?.reason, `during ${out.method} ${out.path}`);
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          reject(err);
        }
        req.destroy(err);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const fail = (err: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const e = err as NodeJS.ErrnoException;
        const errno = typeof e?.code === 'string' ? e.code : 'ECONNRESET';
        reject(
          new MerchantWalletConnectionError(
            `${errno} during ${where}${e?.message ? `: ${e.message}` : ''}`,
            errno,
            err,
          ),
        );
      };
      const timer = setTimeout(() => {
        const e = Object.assign(new Error(`no answer after ${out.timeoutMs} ms`), { code: 'ETIMEDOUT' });
        fail(e);
        req.destroy(e);
      }, out.timeoutMs);
      req.on('error', fail);
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          settled = true;
          clearTimeout(timer);
          // The body reports its own failures from here on (its consumer listens to it).
          req.off('error', fail);
          req.on('error', (err) => res.destroy(err));
          res.once('close', () => signal?.removeEventListener('abort', onAbort));
          req.setTimeout(out.idleTimeoutMs, () => {
            res.destroy(
              Object.assign(new Error(`nothing received for ${out.idleTimeoutMs} ms during ${where}`), {
                code: 'ETIMEDOUT',
              }),
            );
          });
          resolve({ kind: 'stream', status, headers: res.headers, body: res });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('aborted', () => fail(Object.assign(new Error('response aborted'), { code: 'ECONNRESET' })));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          const rawBody = Buffer.concat(chunks).toString('utf8');
          resolve({ kind: 'response', status, headers: res.headers, body: parseBody(rawBody), rawBody });
        });
      });
      if (out.body !== undefined && out.body.length > 0) req.end(out.body);
      else req.end();
    });
  }

  send(out: OutgoingRequest): Promise<RawResponse> {
    const cfg = this.cfg;
    const options: https.RequestOptions = {
      protocol: cfg.protocol,
      host: cfg.connectHost,
      port: cfg.port,
      method: out.method,
      path: out.path,
      headers: out.headers,
      agent: this.agent,
    };
    if (cfg.protocol === 'https:' && cfg.servername) options.servername = cfg.servername;
    const mod = cfg.protocol === 'https:' ? https : http;

    const signal = out.signal;
    if (signal?.aborted)
      return Promise.reject(new MerchantWalletAbortError(signal.reason, `before ${out.method} ${out.path} was sent`));

    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      let gotResponse = false;
      const req = mod.request(options);

      const done = (): void => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        if (settled) return;
        done();
        reject(new MerchantWalletAbortError(signal?.reason, `during ${out.method} ${out.path}`));
        req.destroy();
      };
      signal?.addEventListener('abort', onAbort, { once: true });

      const fail = (err: unknown): void => {
        if (settled) return;
        done();
        const e = err as NodeJS.ErrnoException;
        const errno = typeof e?.code === 'string' ? e.code : 'ECONNRESET';
        const where = `${out.method} ${cfg.protocol}//${cfg.connectHost}:${cfg.port}${out.path}`;
        const message = `${errno} during ${where}${e?.message ? `: ${e.message}` : ''}`;
        const stale = !gotResponse && req.reusedSocket && (errno === 'ECONNRESET' || errno === 'EPIPE');
        reject(
          stale ? new StaleSocketError(message, errno, err) : new MerchantWalletConnectionError(message, errno, err),
        );
      };

      const timer = setTimeout(() => {
        const e = new Error(`timeout after ${out.timeoutMs} ms`) as NodeJS.ErrnoException;
        e.code = 'ETIMEDOUT';
        fail(e);
        req.destroy(e);
      }, out.timeoutMs);

      req.on('error', fail);
      req.on('response', (res) => {
        gotResponse = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('aborted', () => fail(Object.assign(new Error('response aborted'), { code: 'ECONNRESET' })));
        res.on('end', () => {
          if (settled) return;
          done();
          const rawBody = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseBody(rawBody), rawBody });
        });
      });

      if (out.body !== undefined && out.body.length > 0) req.end(out.body);
      else req.end();
    });
  }
}
