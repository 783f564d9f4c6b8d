/** Cancelling a call through its `AbortSignal`: every wait of the call ends with `MerchantWalletAbortError`. */

import { MerchantWalletAbortError } from './errors.js';

export function throwIfAborted(signal: AbortSignal | undefined, where: string): void {
  if (signal?.aborted) throw new MerchantWalletAbortError(signal.reason, where);
}

/**
 * `promise`, or a rejection as soon as `signal` aborts (whichever comes first). The work behind
 * `promise` goes on (it may be shared, as the token exchange is); only this wait ends.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, where: string): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(new MerchantWalletAbortError(signal.reason, where));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new MerchantWalletAbortError(signal.reason, where));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Both signals in one (either aborts it); undefined when neither is given. */
export function combineSignals(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (!a) return b;
  if (!b || a === b) return a;
  return AbortSignal.any([a, b]);
}
