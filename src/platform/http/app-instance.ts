import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

/** A Fastify instance with the TypeBox type provider: what every listener and route module gets. */
export type AppInstance = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>;
