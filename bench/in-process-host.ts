/**
 * The service (src/server.ts, configured from the environment like `npm start`) and, in the same
 * process, a bare Fastify 5 app with one route (bench/bare-fastify.ts's). Prints
 * `in-process <service url> <bare url>` when both listen. Used by bench/in-process.ts.
 */
import Fastify from 'fastify';
import { startService } from '../src/server.js';

const service = await startService({});
const bare = Fastify({ logger: false });
bare.get('/', async () => ({ ok: true }));
const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });
console.log(`in-process ${service.publicUrl} ${bareUrl}`);
process.on('SIGTERM', () => void Promise.all([bare.close(), service.close()]).then(() => process.exit(0)));
