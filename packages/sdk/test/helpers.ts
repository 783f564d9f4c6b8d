/**
 * Test helpers: a stub Merchant Wallet API server on 127.0.0.1 (port 0) that records every
 * request with its raw bytes, serves the token exchange, and recomputes request signatures
 * the way the real server must (from the request line and the raw body bytes).
 */

import { createHash, createHmac } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MerchantWalletClient, type MerchantWalletClientOptions } from '../src/index.js';

export const CLIENT_ID = 'cli_test';
export const API_KEY = 'ak_test_secret';
export const SIGNING_KEY = 'sk_test_signing_key';

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface StubRequest {
  method: string;
  /** The request-target exactly as received. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Raw body bytes as received. */
  body: Buffer;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  json: unknown;
}

export interface StubReply {
  status?: number;
  headers?: Record<string, string>;
  /** JSON body. */
  body?: unknown;
  /** Raw text body (wins over `body`). */
  raw?: string;
  /** Destroy the socket without answering. */
  destroy?: boolean;
  /** Never answer. */
  hang?: boolean;
}

export type StubHandler = (req: StubRequest, index: number) => StubReply | Promise<StubReply>;

export interface Stub {
  port: number;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  /** Business requests (everything except the token exchange), in arrival order. */
  requests: StubRequest[];
  /** Token-exchange requests, in arrival order. */
  tokenRequests: StubRequest[];
  /** Tokens issued so far. */
  issued: string[];
  close(): Promise<void>;
}

export interface StubOptions {
  handle: StubHandler;
  /** Lifetime of issued tokens in seconds. Default 1800. */
  tokenTtlSec?: number;
  /** Override the token-exchange answer. */
  token?: (req: StubRequest, index: number) => StubReply | Promise<StubReply> | undefined;
  /** Delay before answering a token exchange (ms). */
  tokenDelayMs?: number;
}

function send(res: http.ServerResponse, reply: StubReply): void {
  if (reply.destroy) {
    res.socket?.destroy();
    return;
  }
  if (reply.hang) return;
  const status = reply.status ?? 200;
  const headers: Record<string, string> = {
    'x-request-id': `req_${Math.random().toString(16).slice(2)}`,
    ...reply.headers,
  };
  let payload = '';
  if (reply.raw !== undefined) payload = reply.raw;
  else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    headers['content-type'] ??= 'application/json';
  }
  res.writeHead(status, headers);
  res.end(payload);
}

export async function startStub(opts: StubOptions): Promise<Stub> {
  const requests: StubRequest[] = [];
  const tokenRequests: StubRequest[] = [];
  const issued: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        let json: unknown;
        try {
          json = body.length ? JSON.parse(body.toString('utf8')) : undefined;
        } catch {
          json = undefined;
        }
        const r: StubRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json };
        try {
          if (r.method === 'POST' && r.url === '/v1/connect/token') {
            tokenRequests.push(r);
            const idx = tokenRequests.length - 1;
            if (opts.tokenDelayMs) await new Promise((ok) => setTimeout(ok, opts.tokenDelayMs));
            const custom = opts.token ? await opts.token(r, idx) : undefined;
            if (custom) return send(res, custom);
            if (r.headers['x-client-id'] !== CLIENT_ID || r.headers['x-api-key'] !== API_KEY) {
              return send(res, {
                status: 401,
                body: {
                  type: 'authentication_error',
                  code: 'invalid_credentials',
                  message: 'bad credentials',
                  request_id: 'req_tok',
                },
              });
            }
            const tok = `tok_${idx + 1}`;
            issued.push(tok);
            return send(res, {
              body: {
                auth_token: tok,
                expired_at: Math.floor(Date.now() / 1000) + (opts.tokenTtlSec ?? 1800),
                token_type: 'Bearer',
                scopes: ['*'],
              },
            });
          }
          requests.push(r);
          send(res, await opts.handle(r, requests.length - 1));
        } catch (err) {
          send(res, { status: 599, raw: String(err) });
        }
      })();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    tokenRequests,
    issued,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** Server-side verification: recompute the signature from the request line and the raw bytes. */
export function serverSignature(r: StubRequest, signingKey: string = SIGNING_KEY): string {
  const bodyHash = createHash('sha256').update(r.body).digest('hex');
  const signingString = [
    r.method,
    r.url,
    String(r.headers['x-timestamp']),
    String(r.headers['x-nonce']),
    bodyHash,
  ].join('\n');
  return createHmac('sha256', signingKey).update(signingString).digest('base64');
}

export function signatureValid(r: StubRequest, signingKey: string = SIGNING_KEY): boolean {
  return typeof r.headers['x-signature'] === 'string' && r.headers['x-signature'] === serverSignature(r, signingKey);
}

export interface TestClient {
  client: MerchantWalletClient;
  /** Delays requested from the injected sleep. */
  sleeps: number[];
}

export function makeClient(
  stub: Pick<Stub, 'baseUrl'>,
  overrides: Partial<MerchantWalletClientOptions> = {},
): TestClient {
  const sleeps: number[] = [];
  const client = new MerchantWalletClient({
    baseUrl: stub.baseUrl,
    clientId: CLIENT_ID,
    apiKey: API_KEY,
    signingKey: SIGNING_KEY,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...overrides,
  });
  return { client, sleeps };
}

export function errorBody(code: string, type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type, code, message: `${code} happened`, request_id: `req_${code}`, ...extra };
}
