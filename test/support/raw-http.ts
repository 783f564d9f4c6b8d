import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { signRequest } from '@merchant-wallet/sdk';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/** A plain HTTP call with full control of headers (fetch forbids setting Host). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
      },
      (res) => {
        // An event stream's body never ends: its status and headers are the answer.
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: undefined, text: '' });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Where a hand-signed request goes and whose it is: a service's public URL, the Host naming the environment. */
export interface SignedTarget {
  publicUrl: string;
  host: string;
  /** The bearer token (POST /v1/connect/token). */
  token: string;
  signingKey: string;
}

/** What the signing of a hand-built POST may be told, to follow the rules or to break one on purpose. */
export interface SigningOptions {
  timestamp?: string;
  nonce?: string;
  /** The idempotency key (a new one by default). */
  key?: string;
  /** The path and body the signature covers, when not the ones sent. */
  signedPath?: string;
  signedBody?: string;
  /** The signature itself, instead of the one over the request. */
  signature?: string;
}

/** The headers of a signed JSON POST of `body` to `path` for `to`: what the SDK sends. */
export function signedHeaders(
  to: Omit<SignedTarget, 'publicUrl'>,
  path: string,
  body: string,
  options: SigningOptions = {},
): Record<string, string> {
  const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000));
  const nonce = options.nonce ?? randomUUID();
  return {
    host: to.host,
    authorization: `Bearer ${to.token}`,
    'content-type': 'application/json',
    'x-idempotency-key': options.key ?? randomUUID(),
    'x-timestamp': timestamp,
    'x-nonce': nonce,
    'x-signature':
      options.signature ??
      signRequest({
        method: 'POST',
        pathWithQuery: options.signedPath ?? path,
        timestamp,
        nonce,
        rawBody: options.signedBody ?? body,
        signingKey: to.signingKey,
      }),
  };
}

/**
 * A signed JSON POST built by hand and sent with `rawRequest`: what the SDK sends, with the nonce, the idempotency
 * key and extra headers in the test's hands.
 */
export function signedPost(
  to: SignedTarget,
  path: string,
  body: string,
  options: { nonce?: string; key?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return rawRequest(`${to.publicUrl}${path}`, {
    method: 'POST',
    body,
    headers: { ...signedHeaders(to, path, body, options), ...options.headers },
  });
}
