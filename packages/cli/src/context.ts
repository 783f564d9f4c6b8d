/** What every command gets: its parsed arguments, output helpers, the profile and a client. */
import { MerchantWalletClient, SDK_VERSION, type TokenStore } from '@merchant-wallet/sdk';
import {
  configPath,
  profileName,
  readConfig,
  resolveCredentials,
  writeConfig,
  type ConfigFile,
  type Credentials,
  type Profile,
} from './config.js';
import type { Io } from './io.js';
import { fileTokenStore, tokenCachePath } from './token-store.js';

export const CLI_VERSION = '0.1.0';

export type Values = Record<string, string | boolean | string[] | undefined>;

export class Context {
  private clientInstance: MerchantWalletClient | undefined;
  /**
   * Aborted by SIGINT / SIGTERM while `untilInterrupted` runs (listen); other commands keep Node's default (exit at
   * once).
   */
  readonly abort = new AbortController();

  constructor(
    readonly io: Io,
    readonly values: Values,
    readonly positionals: string[],
  ) {}

  get json(): boolean {
    return this.values['json'] === true;
  }

  /** A string option's value (undefined when not given). */
  str(name: string): string | undefined {
    const v = this.values[name];
    return typeof v === 'string' ? v : undefined;
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  /** Human text to stdout (not with --json). */
  say(text: string): void {
    if (!this.json) this.io.stdout(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Progress and notices: stderr, never with --json. */
  note(text: string): void {
    if (!this.json) this.io.stderr(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** The result: as JSON with --json (one line), else `human` (or the value indented). */
  result(value: unknown, human?: string): void {
    if (this.json) this.io.stdout(`${JSON.stringify(value)}\n`);
    else this.io.stdout(`${human ?? JSON.stringify(value, null, 2)}\n`);
  }

  get profile(): string {
    return profileName(this.str('profile'), this.io.env);
  }

  get configPath(): string {
    return configPath(this.io.env);
  }

  readConfig(): ConfigFile {
    return readConfig(this.configPath);
  }

  /** Changes this profile's entry (read, change, write back whole). */
  updateProfile(change: (p: Profile) => Profile): void {
    const config = this.readConfig();
    config.profiles[this.profile] = change(config.profiles[this.profile] ?? {});
    writeConfig(this.configPath, config);
  }

  credentials(): Credentials {
    return resolveCredentials(this.io.env, this.readConfig().profiles[this.profile], this.profile);
  }

  /** The SDK client of these credentials (every API call of the CLI goes through it). */
  client(): MerchantWalletClient {
    if (!this.clientInstance) {
      const c = this.credentials();
      this.clientInstance = newClient(c, fileTokenStore(tokenCachePath(this.io.env), c));
    }
    return this.clientInstance;
  }

  /** Runs `work` with SIGINT and SIGTERM turned into `abort` (a clean end, exit status 0), then restores them. */
  async untilInterrupted<T>(work: () => Promise<T>): Promise<T> {
    const stop = () => this.abort.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      return await work();
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  }

  close(): void {
    this.clientInstance?.close();
  }
}

/** `tokenStore`: the tokens of earlier runs (token-store.ts); none for `mwa login`, which checks the key itself. */
export function newClient(c: Credentials, tokenStore?: TokenStore): MerchantWalletClient {
  // A *.localhost base URL connects to the loopback address: the SDK does it (RFC 6761).
  return new MerchantWalletClient({
    baseUrl: c.baseUrl,
    clientId: c.clientId,
    apiKey: c.apiKey,
    signingKey: c.signingKey,
    userAgent: `mwa/${CLI_VERSION} merchant-wallet-sdk-ts/${SDK_VERSION} node/${process.version}`,
    tokenStore,
  });
}
