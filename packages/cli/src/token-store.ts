/**
 * The access tokens of earlier `mwa` runs, so that each run does not exchange the key again (the
 * API allows 20 exchanges a minute per key, which a script running mwa in a loop would use up):
 * `$XDG_CACHE_HOME/mwa/tokens.json` (else `~/.cache/mwa/tokens.json`), mode 0600 in a 0700
 * directory, one entry per base URL and key (named by a hash, never by the key), expired ones dropped.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TokenResponse, TokenStore } from '@merchant-wallet/sdk';
import type { Credentials } from './config.js';

export function tokenCachePath(env: Record<string, string | undefined>): string {
  const base = env['XDG_CACHE_HOME'] || join(env['HOME'] || homedir(), '.cache');
  return join(base, 'mwa', 'tokens.json');
}

type Entries = Record<string, TokenResponse>;

function read(path: string): Entries {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Entries) : {};
  } catch {
    return {};
  }
}

export function fileTokenStore(path: string, c: Credentials): TokenStore {
  const id = createHash('sha256').update(`${c.baseUrl}\n${c.clientId}\n${c.apiKey}`).digest('hex').slice(0, 32);
  return {
    load: () => read(path)[id],
    save: (token) => {
      const nowS = Date.now() / 1000;
      const entries = Object.fromEntries(
        Object.entries(read(path)).filter(([, t]) => typeof t?.expired_at === 'number' && t.expired_at > nowS),
      );
      entries[id] = token;
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(entries), { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, path);
    },
  };
}
