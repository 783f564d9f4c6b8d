/**
 * MerchantWalletClient: authentication (token cache), signing, idempotency keys, retries.
 *
 * Over 300 lines on purpose: it is one job, the request loop of one client (token, sign, send,
 * decide to retry with the same key), and its parts already live apart (config, errors,
 * pagination, resources, retry, signing, token); what stays here is the state they share.
 */

import { randomUUID } from 'node:crypto';
import { resolveConfig, type MerchantWalletClientOptions, type ResolvedConfig } from './config.js';
import { abortable, combineSignals, throwIfAborted } from './abort.js';
import {
  errorFromResponse,
  headerValue,
  MerchantWalletAPIError,
  MerchantWalletError,
  StepUpRequiredError,
} from './errors.js';
import { paginate, type PaginateOptions } from './pagination.js';
import { createResources, type Resources } from './resources.js';
import { decideRetry, delayBeforeRetry } from './retry.js';
import { isSignedMethod, signRequest } from './signing.js';
import { TokenCache, type TokenExchangeResult } from './token.js';
import {
  HttpTransport,
  StaleSocketError,
  type OpenedStream,
  type OutgoingRequest,
  type RawResponse,
} from './transport.js';
import type { CallOptions, RequestOptions, StreamRequestOptions } from './request-options.js';
import type { HttpMethod, ListEnvelope, QueryParams, TokenResponse } from './types.js';

export type { CallOptions, RequestOptions, StreamRequestOptions } from './request-options.js';
export type { OpenedStream } from './transport.js';

export interface RawResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  rawBody: string;
}

/** A call with everything that stays fixed across its attempts. */
interface PreparedCall {
  method: HttpMethod;
  /** Path + query exactly as put on the request line and signed. */
  pathWithQuery: string;
  bodyBytes: Buffer | undefined;
  idempotencyKey: string | undefined;
  onBehalfOf: string | undefined;
  sign: boolean;
  auth: boolean;
  timestamp: string | undefined;
  nonce: string | undefined;
  headers: Record<string, string | undefined>;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** A write without an idempotency key that may still be resent (the token exchange: it creates nothing). */
  resendWithoutKey?: boolean;
}

const METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PATCH', 'PUT', 'DELETE']);

export function buildQueryString(query: QueryParams | undefined): string {
  if (!query) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.join('&');
}

function checkTimeout(ms: number): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0)
    throw new TypeError('timeoutMs must be a finite number > 0');
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * Whether a call whose answer was lost or failed (5xx, reset, timeout) may be sent again: a GET, a
 * DELETE (the reference: deletes are naturally idempotent and need no key; a second one finds the
 * thing gone), or a write with its idempotency key (the server replays the first result). Another
 * write without a key might have run, and a second copy would run again.
 */
function mayResend(call: PreparedCall): boolean {
  return (
    call.method === 'GET' ||
    call.method === 'DELETE' ||
    call.idempotencyKey !== undefined ||
    call.resendWithoutKey === true
  );
}

export class MerchantWalletClient implements Resources {
  private readonly cfg: ResolvedConfig;
  private readonly transport: HttpTransport;
  private readonly tokens: TokenCache;
  /**
   * Failures of the token exchange (already retried by the exchange itself): never retried again by the call that
   * needed the token.
   */
  private readonly tokenFailures = new WeakSet<object>();
  /** Timeout and signal of every call made through this object (`withOptions`). */
  private callDefaults: CallOptions = {};

  declare readonly members: Resources['members'];
  declare readonly deposits: Resources['deposits'];
  declare readonly balances: Resources['balances'];
  declare readonly merchant: Resources['merchant'];
  declare readonly assets: Resources['assets'];
  declare readonly withdrawals: Resources['withdrawals'];
  declare readonly webhooks: Resources['webhooks'];
  declare readonly events: Resources['events'];
  declare readonly qrpay: Resources['qrpay'];
  declare readonly ledger: Resources['ledger'];
  declare readonly balanceMonitors: Resources['balanceMonitors'];
  declare readonly exports: Resources['exports'];
  declare readonly kyc: Resources['kyc'];
  declare readonly hostedScreens: Resources['hostedScreens'];
  declare readonly sandbox: Resources['sandbox'];
  declare readonly remittance: Resources['remittance'];
  declare readonly exchange: Resources['exchange'];
  declare readonly earn: Resources['earn'];
  declare readonly cards: Resources['cards'];

  constructor(options: MerchantWalletClientOptions) {
    this.cfg = resolveConfig(options);
    this.transport = new HttpTransport(this.cfg);
    this.tokens = new TokenCache(
      () => this.exchangeToken(),
      this.cfg.now,
      this.cfg.tokenRenewSkewSeconds,
      this.cfg.tokenStore,
    );
    this.attachResources();
  }

  /**
   * The same client (token cache, connections, configuration) with a timeout and/or an
   * `AbortSignal` for every call made through the returned object, e.g.
   * `await client.withOptions({ timeoutMs: 5000, signal }).members.get('user-42')`. Options given
   * to `request` itself win; a signal given there and here both cancel.
   */
  withOptions(options: CallOptions): MerchantWalletClient {
    if (options.timeoutMs !== undefined) checkTimeout(options.timeoutMs);
    const scoped = Object.create(this) as MerchantWalletClient;
    scoped.callDefaults = {
      timeoutMs: options.timeoutMs ?? this.callDefaults.timeoutMs,
      signal: combineSignals(this.callDefaults.signal, options.signal),
    };
    scoped.attachResources();
    return scoped;
  }

  private attachResources(): void {
    const r = createResources(this);
    const self = this as { -readonly [K in keyof Resources]: Resources[K] };
    self.members = r.members;
    self.deposits = r.deposits;
    self.balances = r.balances;
    self.merchant = r.merchant;
    self.assets = r.assets;
    self.withdrawals = r.withdrawals;
    self.webhooks = r.webhooks;
    self.events = r.events;
    self.qrpay = r.qrpay;
    self.ledger = r.ledger;
    self.balanceMonitors = r.balanceMonitors;
    self.exports = r.exports;
    self.kyc = r.kyc;
    self.hostedScreens = r.hostedScreens;
    self.sandbox = r.sandbox;
    self.remittance = r.remittance;
    self.exchange = r.exchange;
    self.earn = r.earn;
    self.cards = r.cards;
  }

  /** A valid access token (cached; renewed about 60 s before `expired_at`; concurrent callers share one exchange). */
  getToken(): Promise<string> {
    return this.tokens.get();
  }

  /** Drops the cached token; the next call exchanges the API key again. */
  invalidateToken(): void {
    this.tokens.invalidate();
  }

  /** The last token response (e.g. its `scopes`), if a token has been obtained. */
  tokenInfo(): TokenResponse | undefined {
    return this.tokens.peek();
  }

  /** Closes pooled keep-alive connections (lets the process exit promptly). */
  close(): void {
    this.transport.close();
  }

  /**
   * Authenticated, signed call with retries (same idempotency key, new nonce and timestamp per
   * attempt). Resolves with the parsed body of a 2xx answer; rejects with `MerchantWalletError`.
   */
  async request<T = unknown>(opts: RequestOptions): Promise<T> {
    const call = this.prepare(opts);
    const res = await this.execute(call, true);
    return res.body as T;
  }

  /**
   * One attempt, authenticated and signed as `request` would, without retries; never throws for an
   * HTTP error status (network failures still reject). Meant for protocol tests.
   */
  async requestRaw(opts: RequestOptions): Promise<RawResult> {
    const call = this.prepare(opts);
    const res = await this.sendOnce(call);
    return { status: res.status, headers: res.headers, body: res.body, rawBody: res.rawBody };
  }

  /**
   * Opens a GET whose 2xx answer is read as it arrives (`client.events.stream` builds on it):
   * authenticated like any call (a refused token is exchanged again once), one attempt, no
   * retries (the caller decides when to reconnect). Rejects with `MerchantWalletError` for a
   * non-2xx answer or a connection failure.
   */
  async openStream(opts: StreamRequestOptions): Promise<OpenedStream> {
    if (opts.idleTimeoutMs !== undefined) checkTimeout(opts.idleTimeoutMs);
    const call = this.prepare({
      method: 'GET',
      path: opts.path,
      query: opts.query,
      headers: { accept: 'text/event-stream', ...opts.headers },
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
    });
    let tokenResent = false;
    for (;;) {
      const { out, token } = await this.buildAttempt(call);
      const res = await this.transport.openStream({ ...out, idleTimeoutMs: opts.idleTimeoutMs ?? 45_000 });
      if (res.kind === 'stream') return res;
      const err = errorFromResponse(res.status, res.headers, res.body, res.rawBody);
      if (!tokenResent && err.status === 401 && err.code === 'invalid_token') {
        tokenResent = true;
        this.tokens.invalidate(token);
        continue;
      }
      throw err;
    }
  }

  /** Iterates every item of a cursor-paginated list, fetching pages until `has_more` is false. */
  paginate<T>(path: string, opts: PaginateOptions = {}): AsyncIterable<T> {
    return paginate<T>(
      <U>(p: string, query: QueryParams, onBehalfOf: string | undefined) =>
        this.request<ListEnvelope<U>>({ method: 'GET', path: p, query, onBehalfOf }),
      path,
      opts,
    );
  }

  // ---------------------------------------------------------------------------------------------

  private prepare(opts: RequestOptions): PreparedCall {
    if (!opts || typeof opts !== 'object') throw new TypeError('request options required');
    const method = String(opts.method ?? '').toUpperCase() as HttpMethod;
    if (!METHODS.has(method)) throw new TypeError(`unsupported method ${String(opts.method)}`);
    if (typeof opts.path !== 'string' || opts.path === '') throw new TypeError('path required');
    if (opts.body !== undefined && opts.rawBody !== undefined)
      throw new TypeError('pass either body or rawBody, not both');

    const path = opts.path.startsWith('/') ? opts.path : `/${opts.path}`;
    const qs = buildQueryString(opts.query);
    // Built once: the same string goes on the request line and into the signature.
    const pathWithQuery = this.cfg.basePath + path + (qs ? (path.includes('?') ? '&' : '?') + qs : '');

    let bodyBytes: Buffer | undefined;
    if (opts.rawBody !== undefined) {
      bodyBytes = typeof opts.rawBody === 'string' ? Buffer.from(opts.rawBody, 'utf8') : Buffer.from(opts.rawBody);
    } else if (opts.body !== undefined) {
      const json = JSON.stringify(opts.body);
      if (json === undefined) throw new TypeError('body is not JSON-serialisable');
      bodyBytes = Buffer.from(json, 'utf8');
    }
    if (bodyBytes !== undefined && bodyBytes.length === 0) bodyBytes = undefined;

    let idempotencyKey: string | undefined;
    if (typeof opts.idempotencyKey === 'string') idempotencyKey = opts.idempotencyKey;
    else if (opts.idempotencyKey === undefined && (method === 'POST' || method === 'PUT' || method === 'PATCH'))
      idempotencyKey = randomUUID();

    const headers: Record<string, string | undefined> = {};
    if (opts.stepUp !== undefined) headers['x-step-up'] = opts.stepUp;
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;

    if (opts.timeoutMs !== undefined) checkTimeout(opts.timeoutMs);
    return {
      method,
      pathWithQuery,
      bodyBytes,
      idempotencyKey,
      onBehalfOf: opts.onBehalfOf,
      sign: opts.sign ?? isSignedMethod(method),
      auth: opts.auth ?? true,
      timestamp: opts.timestamp === undefined ? undefined : String(opts.timestamp),
      nonce: opts.nonce,
      headers,
      timeoutMs: opts.timeoutMs ?? this.callDefaults.timeoutMs ?? this.cfg.timeoutMs,
      signal: combineSignals(this.callDefaults.signal, opts.signal),
    };
  }

  /** Headers of one attempt: fresh timestamp and nonce each time. */
  private async buildAttempt(call: PreparedCall): Promise<{ out: OutgoingRequest; token: string | undefined }> {
    let token: string | undefined;
    if (call.auth) {
      try {
        token = await abortable(this.tokens.get(), call.signal, 'while waiting for the access token');
      } catch (err) {
        if (typeof err === 'object' && err !== null) this.tokenFailures.add(err);
        throw err;
      }
    }
    const h: Record<string, string | undefined> = {
      host: this.cfg.hostHeader,
      'user-agent': this.cfg.userAgent,
      accept: 'application/json',
    };
    if (token !== undefined) h['authorization'] = `Bearer ${token}`;
    if (call.onBehalfOf !== undefined) h['x-on-behalf-of'] = call.onBehalfOf;
    if (call.idempotencyKey !== undefined) h['x-idempotency-key'] = call.idempotencyKey;
    if (call.bodyBytes !== undefined) h['content-type'] = 'application/json';
    if (call.bodyBytes !== undefined || call.method !== 'GET')
      h['content-length'] = String(call.bodyBytes?.length ?? 0);
    if (call.sign) {
      const timestamp = call.timestamp ?? String(Math.floor(this.cfg.now() / 1000));
      const nonce = call.nonce ?? randomUUID();
      h['x-timestamp'] = timestamp;
      h['x-nonce'] = nonce;
      h['x-signature'] = signRequest({
        method: call.method,
        pathWithQuery: call.pathWithQuery,
        timestamp,
        nonce,
        rawBody: call.bodyBytes ?? Buffer.alloc(0),
        signingKey: this.cfg.signingKey,
      });
    }
    Object.assign(h, call.headers);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(h)) if (v !== undefined) headers[k] = v;
    return {
      out: {
        method: call.method,
        path: call.pathWithQuery,
        headers,
        body: call.bodyBytes,
        timeoutMs: call.timeoutMs,
        signal: call.signal,
      },
      token,
    };
  }

  /**
   * One attempt; a request that failed only because a kept-alive socket had been closed by the server is re-sent once
   * with fresh headers.
   */
  private async sendOnce(call: PreparedCall): Promise<RawResponse & { token: string | undefined }> {
    let attempt = await this.buildAttempt(call);
    try {
      return { ...(await this.transport.send(attempt.out)), token: attempt.token };
    } catch (err) {
      if (!(err instanceof StaleSocketError) || !mayResend(call)) throw err;
      attempt = await this.buildAttempt(call);
      return { ...(await this.transport.send(attempt.out)), token: attempt.token };
    }
  }

  /** Runs a call with the retry policy; resolves with the 2xx answer. */
  private async execute(call: PreparedCall, resendOnInvalidToken: boolean): Promise<RawResponse> {
    let attempt = 0;
    let tokenResent = false;
    let unknownCodeRetried = false;
    for (;;) {
      attempt++;
      throwIfAborted(call.signal, `before attempt ${attempt} of ${call.method} ${call.pathWithQuery}`);
      let error: unknown;
      // Token exchange failures propagate as they are (the exchange has its own retries).
      let res: (RawResponse & { token: string | undefined }) | undefined;
      try {
        res = await this.sendOnce(call);
      } catch (err) {
        if (!(err instanceof MerchantWalletError) || this.tokenFailures.has(err)) throw err;
        error = err;
      }
      if (res !== undefined) {
        if (isSuccess(res.status)) return res;
        const err = errorFromResponse(res.status, res.headers, res.body, res.rawBody);
        if (err instanceof StepUpRequiredError) {
          // The repeat is the same prepared call (body bytes, key) with x-step-up; not retried here.
          err.bindRepeat(
            call.idempotencyKey,
            async (challengeId) =>
              (await this.execute({ ...call, headers: { ...call.headers, 'x-step-up': challengeId } }, true)).body,
          );
        }
        if (resendOnInvalidToken && call.auth && !tokenResent && err.status === 401 && err.code === 'invalid_token') {
          // Drop the token that was refused, exchange again and resend once (not counted as an attempt).
          tokenResent = true;
          this.tokens.invalidate(res.token);
          attempt--;
          continue;
        }
        error = err;
      }
      const decision = decideRetry(error);
      if (!decision.retry || attempt >= this.cfg.maxAttempts) throw error;
      // The reference: a code outside its table is retried once with the same key, then reported.
      if (decision.reason === 'unknown_code') {
        if (unknownCodeRetried) throw error;
        unknownCodeRetried = true;
      }
      // A 429 is refused before anything runs; any other failure of a keyless write may have run.
      if (decision.reason !== 'rate_limited' && !mayResend(call)) throw error;
      await abortable(
        this.cfg.sleep(delayBeforeRetry(decision, attempt - 1, this.cfg)),
        call.signal,
        `while waiting to retry ${call.method} ${call.pathWithQuery}`,
      );
    }
  }

  /** POST /v1/connect/token with x-client-id and x-api-key, no body; retried like any call. */
  private async exchangeToken(): Promise<TokenExchangeResult> {
    const call: PreparedCall = {
      method: 'POST',
      pathWithQuery: `${this.cfg.basePath}/v1/connect/token`,
      bodyBytes: undefined,
      idempotencyKey: undefined,
      onBehalfOf: undefined,
      sign: false,
      auth: false,
      timestamp: undefined,
      nonce: undefined,
      headers: { 'x-client-id': this.cfg.clientId, 'x-api-key': this.cfg.apiKey },
      // The exchange is shared by every call waiting for a token: none of their signals cancels it.
      timeoutMs: this.cfg.timeoutMs,
      signal: undefined,
      resendWithoutKey: true,
    };
    const res = await this.execute(call, false);
    const body = res.body as TokenResponse;
    if (body === null || typeof body !== 'object' || typeof body.auth_token !== 'string') {
      throw new MerchantWalletAPIError({
        status: res.status,
        code: 'api_error',
        type: 'api_error',
        message: 'token exchange answered without auth_token',
        requestId: headerValue(res.headers, 'x-request-id') ?? '',
        body: {},
        headers: res.headers,
      });
    }
    const date = headerValue(res.headers, 'date');
    const serverDateMs = date ? Date.parse(date) : NaN;
    return { token: body, serverDateMs: Number.isNaN(serverDateMs) ? undefined : serverDateMs };
  }
}
