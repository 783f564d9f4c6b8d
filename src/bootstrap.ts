import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceContext } from './service-context.js';
import { anyMerchant, createKey, createMerchant, lockDemoMerchantBootstrap } from './modules/merchants/index.js';
import { scopeCatalogue } from './platform/auth/scopes.js';
import { randomToken } from './platform/ids.js';
import { createActiveUser } from './console/service.js';

export interface DemoCredentials {
  merchant_id: string;
  environment: 'sandbox';
  client_id: string;
  api_key: string;
  signing_key: string;
  /** The merchant console's owner user (docs/console.md): sign in at /console. Made when the start announces itself, or
   * asked to. */
  console_email?: string;
  console_password?: string;
}

export const demoConsoleEmail = 'owner@demo-merchant.test';

/**
 * With an empty database, creates a demo merchant with one sandbox key holding every scope and
 * an owner user of the merchant console. The
 * advisory lock makes two processes starting together on one PostgreSQL create it once.
 */
export async function ensureDemoMerchant(
  ctx: ServiceContext,
  print: (line: string) => void,
  options: { consoleUser: boolean },
): Promise<DemoCredentials | undefined> {
  const demo = await ctx.db.transaction().execute(async (trx) => {
    await lockDemoMerchantBootstrap(trx);
    if (await anyMerchant(trx)) return undefined;
    const now = ctx.clock.real();
    const merchant = await createMerchant(trx, 'Demo merchant', now);
    const key = await createKey(
      trx,
      {
        merchantId: merchant.id,
        environment: 'sandbox',
        scopes: [...scopeCatalogue],
        pendingScopes: [],
        ipAllowlist: '',
        expiresAt: null,
      },
      now,
    );
    // The password hash costs about a third of a second of CPU (scrypt, password.ts): made only
    // when asked (a real start), not in every test service.
    const consolePassword = options.consoleUser ? randomToken(18) : undefined;
    if (consolePassword)
      await createActiveUser(
        trx,
        merchant.id,
        demoConsoleEmail,
        'owner',
        consolePassword,
        now,
        ctx.config.consolePasswordCost,
      );
    return {
      merchant_id: merchant.id,
      environment: 'sandbox' as const,
      client_id: key.client_id,
      api_key: key.api_key,
      signing_key: key.signing_key,
      ...(consolePassword ? { console_email: demoConsoleEmail, console_password: consolePassword } : {}),
    };
  });
  if (!demo) return undefined;
  mkdirSync(ctx.config.dataDir, { recursive: true });
  const file = join(ctx.config.dataDir, 'demo-credentials.json');
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  print(`Demo merchant ${demo.merchant_id} (sandbox). These credentials are shown once and written to ${file}:`);
  print(`  client_id:   ${demo.client_id}`);
  print(`  api_key:     ${demo.api_key}`);
  print(`  signing_key: ${demo.signing_key}`);
  if (demo.console_email)
    print(
      `Merchant console (/console on the public listener): sign in as ${demo.console_email} with the ` +
        `password ${demo.console_password}`,
    );
  return demo;
}
