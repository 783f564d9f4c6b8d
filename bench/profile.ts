import { benchMerchant, load, startServer } from './support.js';
import pg from 'pg';
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.connect();
const name = `mwa_prof_${Date.now()}`;
await admin.query(`CREATE DATABASE ${name}`);
// PROFILE_EMBEDDED=1: the embedded database (in memory) instead of PostgreSQL.
const url = process.env.PROFILE_EMBEDDED ? 'memory://' : `postgres://postgres@127.0.0.1:5432/${name}`;
const server = await startServer(url, {}, [
  '--cpu-prof',
  `--cpu-prof-dir=${process.env.PROFILE_DIR ?? '/tmp/perfwork/prof'}`,
]);
const { host, client } = await benchMerchant(server, 'p', ['members:write', 'balances:read']);
await client.members.create({ external_member_id: 'p-0' });
const token = await client.getToken();
client.close();
const which = process.argv[2] ?? 'both';
if (which !== 'read') console.log(await load('/healthz', { url: `${server.publicUrl}/healthz`, duration: 4 }));
if (which !== 'health')
  console.log(
    await load('read', {
      url: `${server.publicUrl}/v1/balances`,
      duration: 4,
      headers: { host, authorization: `Bearer ${token}`, 'x-on-behalf-of': 'p-0' },
    }),
  );
await server.stop();
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
