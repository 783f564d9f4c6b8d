import assert from 'node:assert/strict';
import { MerchantWalletError } from '@merchant-wallet/sdk';

/** Asserts that an SDK call fails with the given error code (and HTTP status, when given): answers the error. */
export async function expectCode(
  promise: Promise<unknown>,
  code: string,
  status?: number,
): Promise<MerchantWalletError> {
  let caught: MerchantWalletError | undefined;
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof MerchantWalletError, `expected MerchantWalletError, got ${String(err)}`);
    assert.equal(err.code, code, `${err.code}: ${err.message}`);
    if (status) assert.equal(err.status, status);
    caught = err;
    return true;
  });
  return caught!;
}
