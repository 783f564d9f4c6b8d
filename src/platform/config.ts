export interface Config {
  port: number;
  host: string;
  adminPort: number;
  adminHost: string;
  adminToken: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  logLevel: string;
  /** Addresses of reverse proxies whose X-Forwarded-For is believed; empty: the socket address is the client. */
  trustedProxies: string[];
  bodyLimitBytes: number;
  /** Background workers (cleanup, webhook delivery); tests may turn them off. */
  workers: boolean;
  /** Multiplies every rate-limit quota; 1 in service. Load tests raise it to measure the limiter without hitting it. */
  rateLimitScale: number;
  jobPollIntervalMs: number;
}

function intFrom(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a whole number: ${value}`);
  return n;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: intFrom(env.PORT, 8080),
    host: env.HOST || '127.0.0.1',
    adminPort: intFrom(env.ADMIN_PORT, 8081),
    adminHost: env.ADMIN_HOST || '127.0.0.1',
    adminToken: env.ADMIN_TOKEN || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || './data',
    logLevel: env.LOG_LEVEL || 'info',
    trustedProxies: (env.TRUSTED_PROXIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    bodyLimitBytes: intFrom(env.BODY_LIMIT_BYTES, 1024 * 1024),
    workers: env.WORKERS !== 'off',
    rateLimitScale: intFrom(env.RATE_LIMIT_SCALE, 1) || 1,
    jobPollIntervalMs: intFrom(env.JOB_POLL_INTERVAL_MS, 250),
  };
}
