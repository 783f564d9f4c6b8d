import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { openDirectDatabase, type DatabaseHandle } from './db/connection.js';
import { migrateToLatest } from './db/migrate.js';
import type { Config } from './platform/config/config.js';
import type { AppInstance } from './platform/http/http-app.js';
import { loggerOptions } from './platform/telemetry/request-log.js';
import { randomToken } from './platform/ids.js';
import { hostedScreenKeyBytes, parseHostedScreenKey } from './platform/auth/keys.js';

/*
 * What the start (server.ts) works out before and around its listeners: the settings kept in the
 * data directory when not configured (the operator token, the hosted-screen key), the public base
 * URLs, the background log, the database's description and its migration.
 */

export function resolveAdminToken(config: Config, announce: (line: string) => void): string {
  if (config.adminToken) return config.adminToken;
  const file = join(config.dataDir, 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = `adm_${randomToken(32)}`;
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  announce(`Operator API token (stored in ${file}): ${token}`);
  return token;
}

/**
 * The hosted screens' master key: `HOSTED_SCREEN_KEY`, or else one generated at first start and
 * kept in `DATA_DIR/hosted-screen-key` (like the operator token). Every process that serves the
 * screens or reads KYC images must hold the same key, so a deployment sets the variable: a kept
 * file is reported with a warning.
 */
export function resolveHostedScreenKey(config: Config, log: FastifyBaseLogger): Buffer {
  if (config.hostedScreenKey) return config.hostedScreenKey;
  const file = join(config.dataDir, 'hosted-screen-key');
  let key: Buffer | undefined;
  if (existsSync(file)) {
    key = parseHostedScreenKey(readFileSync(file, 'utf8'));
    if (!key)
      throw new Error(
        `${file} does not hold a ${hostedScreenKeyBytes}-byte key (base64); set HOSTED_SCREEN_KEY or remove the file`,
      );
  } else {
    key = randomBytes(hostedScreenKeyBytes);
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600 });
  }
  log.warn(
    { file },
    'HOSTED_SCREEN_KEY is not set: the hosted-screen key kept in the data directory is used; in production ' +
      'set HOSTED_SCREEN_KEY (the same in every process), or CSRF tokens and KYC images break across processes',
  );
  return key;
}

/**
 * The background log: the pino logger Fastify makes from the listeners' options (level, redaction),
 * so the service needs no logger package of its own. A Fastify instance only builds it; it never listens.
 */
export function backgroundLogger(config: Config, enabled: boolean): FastifyBaseLogger {
  return Fastify({ logger: enabled ? loggerOptions(config.logLevel) : false }).log.child({ component: 'background' });
}

/** Where the database is, as the start-up log says it (never the URL: it may hold a password). */
export function databaseDescription(config: Config): { database: string; firstStart?: boolean } {
  if (config.databaseUrl === 'memory://') return { database: 'embedded, in memory' };
  if (config.databaseUrl) return { database: 'PostgreSQL server' };
  const dir = join(config.dataDir, 'pgdata');
  return { database: `embedded in ${dir}`, firstStart: !existsSync(join(dir, 'PG_VERSION')) };
}

/** Milliseconds since `start`, for the log. */
export const since = (start: number) => Math.round(performance.now() - start);

/**
 * Behind a transaction-mode pooler the migrations run over the direct URL (`DATABASE_LISTEN_URL`):
 * their lock is a session's (connection.ts, `openDirectDatabase`).
 */
export async function migrateBehindPooler(config: Config, handle: DatabaseHandle): Promise<number> {
  if (handle.kind !== 'postgres' || config.databasePooler !== 'transaction') return migrateToLatest(handle.db);
  const direct = openDirectDatabase(config.databaseListenUrl!);
  try {
    return await migrateToLatest(direct.db);
  } finally {
    await direct.close();
  }
}

/**
 * The public base URLs not configured (PUBLIC_BASE_URL_SANDBOX, PUBLIC_BASE_URL_PRODUCTION): the
 * local names the README gives, with the port the public listener got. Right for one machine
 * only, so a listener on another address than loopback is warned about.
 */
export function resolvePublicBaseUrls(config: Config, publicApp: AppInstance, log: FastifyBaseLogger): void {
  const address = publicApp.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const defaults = {
    sandbox: `http://api-sandbox.localhost:${port}`,
    production: `http://api.localhost:${port}`,
  } as const;
  const missing = (['sandbox', 'production'] as const).filter((env) => config.publicBaseUrls[env] === undefined);
  // As origins (`URL.origin`), also when given by a caller rather than read by loadConfig.
  const origin = (url: string | undefined, fallback: string) => (url === undefined ? fallback : new URL(url).origin);
  config.publicBaseUrls = {
    sandbox: origin(config.publicBaseUrls.sandbox, defaults.sandbox),
    production: origin(config.publicBaseUrls.production, defaults.production),
  };
  const loopback = config.host === 'localhost' || config.host === '::1' || config.host.startsWith('127.');
  if (missing.length > 0 && !loopback) {
    log.warn(
      { unset: missing.map((env) => `PUBLIC_BASE_URL_${env.toUpperCase()}`), publicBaseUrls: config.publicBaseUrls },
      "hosted screens' links (hosted_url) use local default base URLs: set PUBLIC_BASE_URL_SANDBOX and " +
        'PUBLIC_BASE_URL_PRODUCTION to the names clients reach this service by',
    );
  }
}
