/**
 * Credentials and profiles. `mwa login` writes a profile to `$XDG_CONFIG_HOME/mwa/config.json`
 * (else `~/.config/mwa/config.json`), mode 0600 in a 0700 directory; `MWA_CLIENT_ID`,
 * `MWA_API_KEY`, `MWA_SIGNING_KEY` and `MWA_BASE_URL` override its fields one by one.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './io.js';

export const DEFAULT_BASE_URL = 'http://api-sandbox.localhost:8080';

export interface Profile {
  base_url?: string;
  client_id?: string;
  api_key?: string;
  signing_key?: string;
  /**
   * The secret `mwa listen` signs forwarded events with (kept so that a receiver's configuration survives restarts).
   */
  listen_secret?: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
}

export interface Credentials {
  baseUrl: string;
  clientId: string;
  apiKey: string;
  signingKey: string;
}

export function configPath(env: Record<string, string | undefined>): string {
  const base = env['XDG_CONFIG_HOME'] || join(env['HOME'] || homedir(), '.config');
  return join(base, 'mwa', 'config.json');
}

export function readConfig(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    return {
      profiles: parsed && typeof parsed.profiles === 'object' && parsed.profiles !== null ? parsed.profiles : {},
    };
  } catch {
    throw new UsageError(`${path} is not valid JSON: fix or delete it, then run mwa login again`);
  }
}

/**
 * Written whole to a temporary file (0600) and renamed over the old one: never a half-written or world-readable file.
 */
export function writeConfig(path: string, config: ConfigFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function profileName(flag: string | undefined, env: Record<string, string | undefined>): string {
  const name = flag ?? env['MWA_PROFILE'] ?? 'default';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
    throw new UsageError(`invalid profile name "${name}" (letters, digits, _ . -)`);
  return name;
}

/** The profile's fields with the environment's on top; a usage error naming what is missing. */
export function resolveCredentials(
  env: Record<string, string | undefined>,
  profile: Profile | undefined,
  name: string,
): Credentials {
  const pick = (envName: string, field: keyof Profile) => env[envName] || profile?.[field] || undefined;
  const creds = {
    baseUrl: pick('MWA_BASE_URL', 'base_url') ?? DEFAULT_BASE_URL,
    clientId: pick('MWA_CLIENT_ID', 'client_id'),
    apiKey: pick('MWA_API_KEY', 'api_key'),
    signingKey: pick('MWA_SIGNING_KEY', 'signing_key'),
  };
  const missing = [
    creds.clientId ? undefined : 'MWA_CLIENT_ID',
    creds.apiKey ? undefined : 'MWA_API_KEY',
    creds.signingKey ? undefined : 'MWA_SIGNING_KEY',
  ].filter((x) => x !== undefined);
  if (missing.length) {
    throw new UsageError(
      `no credentials: set ${missing.join(', ')} (and MWA_BASE_URL), ` +
        `or run "mwa login"${name === 'default' ? '' : ` --profile ${name}`}`,
    );
  }
  checkBaseUrl(creds.baseUrl);
  return creds as Credentials;
}

export function checkBaseUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`invalid base URL "${url}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new UsageError(`invalid base URL "${url}": http or https only`);
  if (u.search || u.hash) throw new UsageError(`invalid base URL "${url}": no query string or fragment`);
}

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
