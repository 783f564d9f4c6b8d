// Writes the public OpenAPI document (GET /v1/openapi.json) and the operator document
// (GET /admin/v1/openapi.json) to files, from a service on an in-memory database that never
// listens on a fixed port: no running server needed, nothing kept.
//
//   npx tsx scripts/openapi-dump.ts [public.json] [operator.json]
//
// Defaults: tmp/openapi.json and tmp/openapi-operator.json (tmp/ is ignored by git). CI lints the
// public one with Redocly (redocly.yaml); the SDK generates its types from it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { startService } from '../src/server.js';

const [publicFile = 'tmp/openapi.json', operatorFile = 'tmp/openapi-operator.json'] = process.argv.slice(2);
const dataDir = mkdtempSync(join(tmpdir(), 'mwa-openapi-'));
const service = await startService({
  logger: false,
  config: {
    port: 0,
    adminPort: 0,
    host: '127.0.0.1',
    adminHost: '127.0.0.1',
    databaseUrl: 'memory://',
    dataDir,
    adminToken: 'openapi-dump-token-0000',
    workers: false,
  },
});
try {
  for (const [file, app] of [
    [publicFile, service.publicApp],
    [operatorFile, service.adminApp],
  ] as const) {
    const path = resolve(file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify(app.swagger(), null, 2)}\n`);
    console.log(`wrote ${path}`);
  }
} finally {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
