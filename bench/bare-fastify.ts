/**
 * The yardstick: a bare Fastify 5 app with one route and no hooks, logger off, in its own
 * process like the service. Prints `bare fastify on <url>` when listening.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ ok: true }));
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`bare fastify on ${url}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
