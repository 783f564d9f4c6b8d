import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AttemptResult } from './state.js';
import type { ResolvedAddress } from './ssrf.js';

/** A 2xx within this time is a success (extensions §5); DNS, connect and the answer's status line all count. */
export const deliveryTimeoutMs = 15_000;
/** At most this much of an answer's body is read, then the connection is closed. */
export const answerBytesMax = 64 * 1024;

/** A `lookup` for http.request that answers with the address already checked: no second resolution, no rebinding. */
export function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean } | undefined, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  }) as unknown as LookupFunction;
}

/** Connections kept open to one endpoint address: also the bound on attempts in flight to it. */
export const connectionsPerEndpointMax = 16;
/** Endpoint addresses with a pool; past this the least recently used pool is closed. */
const poolsMax = 1_000;
/** An idle kept-alive connection is closed after this long. */
const idleConnectionMs = 30_000;

const pools = new Map<string, HttpAgent>();

/**
 * The keep-alive pool of one endpoint (`endpointId`; endpoints sharing an origin each have
 * their own, so each gets its own connections) at one checked address: its connections all go to
 * that address, so reusing one never reaches anything but the address that was checked.
 */
function poolFor(url: URL, address: ResolvedAddress, endpointId: string): HttpAgent {
  const key = `${endpointId}|${url.protocol}//${url.host}|${address.address}`;
  let agent = pools.get(key);
  if (agent) {
    pools.delete(key);
    pools.set(key, agent);
    return agent;
  }
  const options = {
    keepAlive: true,
    maxSockets: connectionsPerEndpointMax,
    maxFreeSockets: connectionsPerEndpointMax,
    timeout: idleConnectionMs,
    scheduling: 'lifo' as const,
  };
  agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
  pools.set(key, agent);
  if (pools.size > poolsMax) {
    const [oldestKey, oldest] = pools.entries().next().value as [string, HttpAgent];
    pools.delete(oldestKey);
    oldest.destroy();
  }
  return agent;
}

/** Closes every pooled connection (shutdown, tests). */
export function closeDeliveryPools(): void {
  for (const agent of pools.values()) agent.destroy();
  pools.clear();
}

/**
 * One POST, no redirects followed, over the endpoint's keep-alive pool (one pool per endpoint
 * and checked address). Resolves with the status line's code or a network error; never rejects.
 */
export function postOnce(
  url: URL,
  address: ResolvedAddress,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs = deliveryTimeoutMs,
  endpointId = '',
): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        agent: poolFor(url, address, endpointId),
        lookup: pinnedLookup(address),
        headers: { ...headers, 'content-length': String(body.length) },
      },
      (res: IncomingMessage) => {
        finish({ kind: 'response', httpStatus: res.statusCode ?? 0 });
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // Too long an answer: the connection is closed rather than returned to the pool.
          if (read > answerBytesMax) res.destroy();
        });
        res.on('error', () => {});
        // Read to its end, the connection goes back to the pool.
        res.on('end', () => clearTimeout(timer));
        res.on('close', () => clearTimeout(timer));
      },
    );
    // Ends the wait for the status line, and also a body that never ends.
    const timer = setTimeout(() => {
      finish({ kind: 'network', error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      finish({ kind: 'network', error: (err.code ?? err.message).slice(0, 200) });
    });
    req.end(body);
  });
}
