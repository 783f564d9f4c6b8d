/**
 * One forwarded event: a Standard Webhooks request (webhook-id, webhook-timestamp,
 * webhook-signature `v1,<base64 HMAC-SHA256 of id.timestamp.body>`) POSTed to the local URL.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { isLoopbackName, signWebhook } from '@merchant-wallet/sdk';
import { CLI_VERSION } from './context.js';

export interface ForwardResult {
  /** The receiver's HTTP status; undefined when none came (see `error`). */
  status: number | undefined;
  error?: string;
  ms: number;
}

/** A receiver gets as long as the service gives a webhook endpoint (extensions section 5). */
export const FORWARD_TIMEOUT_MS = 15_000;

export function forwardEvent(
  url: URL,
  secret: string,
  event: { event_id: string },
  body: string,
  timeoutMs = FORWARD_TIMEOUT_MS,
): Promise<ForwardResult> {
  const started = performance.now();
  const timestamp = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': `mwa/${CLI_VERSION} (listen)`,
    'webhook-id': event.event_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook({ secret, id: event.event_id, timestamp, body }),
  };
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // localhost and *.localhost are the loopback address (RFC 6761), whatever the resolver says; the Host header keeps
  // the name.
  const connectTo = isLoopbackName(hostname) ? '127.0.0.1' : hostname;
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const done = (r: Omit<ForwardResult, 'ms'>) => resolve({ ...r, ms: Math.round(performance.now() - started) });
    const req = mod.request({
      protocol: url.protocol,
      host: connectTo,
      port: url.port || (url.protocol === 'https:' ? 443 : 80),
      method: 'POST',
      path: `${url.pathname}${url.search}`,
      headers: { host: url.host, ...headers },
      servername: url.protocol === 'https:' && !/^[\d.:]+$/.test(hostname) ? hostname : undefined,
      agent: false,
      timeout: timeoutMs,
    });
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', (err: NodeJS.ErrnoException) => done({ status: undefined, error: err.code ?? err.message }));
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => done({ status: res.statusCode }));
      res.on('error', (err: NodeJS.ErrnoException) => done({ status: res.statusCode, error: err.code ?? err.message }));
    });
    req.end(body);
  });
}
