import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
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

/**
 * One POST, no redirects followed, a fresh connection (never pooled: each attempt connects to the
 * address it checked). Resolves with the status line's code or a network error; never rejects.
 */
export function postOnce(url: URL, address: ResolvedAddress, headers: Record<string, string>, body: Buffer, timeoutMs = deliveryTimeoutMs): Promise<AttemptResult> {
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
        agent: false,
        lookup: pinnedLookup(address),
        headers: { ...headers, 'content-length': String(body.length) },
      },
      (res: IncomingMessage) => {
        finish({ kind: 'response', httpStatus: res.statusCode ?? 0 });
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > answerBytesMax) res.destroy();
        });
        res.on('error', () => {});
        res.on('end', () => {
          clearTimeout(timer);
          req.destroy();
        });
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
