/** `mwa request <METHOD> <path>`: any API call through the SDK (token, signature, idempotency key). */
import { readFileSync } from 'node:fs';
import type { CommandSpec } from '../command.js';
import type { Context } from '../context.js';
import { UsageError } from '../io.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

export const request: CommandSpec = {
  name: 'request',
  summary: 'Make any API call, signed, and print the answer',
  usage: 'request <METHOD> <path> [--data <json>] [--member <id>] [--idempotency-key <key>]',
  details: [
    'The call is authenticated (the API key is exchanged for a token), signed, and POST, PUT and PATCH',
    'get a new idempotency key unless --idempotency-key gives one (give the same key to repeat a call safely).',
    '--data is JSON, @<file> to read it from a file, or - for standard input.',
    '',
    'Examples:',
    '  mwa request GET /v1/balances --member user-42',
    '  mwa request POST /v1/members --data \'{"external_member_id":"user-42"}\'',
    '  mwa request GET "/v1/deposits?asset=USDT&limit=5"',
  ].join('\n'),
  options: {
    data: { type: 'string', short: 'd', placeholder: '<json>', description: 'The JSON body (@file or - for stdin)' },
    member: {
      type: 'string',
      placeholder: '<id>',
      description: 'On behalf of this member (x-on-behalf-of: mem_... or the external id)',
    },
    'idempotency-key': {
      type: 'string',
      placeholder: '<key>',
      description: 'x-idempotency-key (default: a new UUID for POST, PUT, PATCH)',
    },
  },
  positionals: { min: 2, max: 2, names: '<METHOD> <path>' },
  run: async (ctx) => {
    const method = ctx.positionals[0]!.toUpperCase() as Method;
    if (!METHODS.includes(method))
      throw new UsageError(`unknown method "${ctx.positionals[0]}" (${METHODS.join(', ')})`, 'request');
    const path = ctx.positionals[1]!;
    if (!path.startsWith('/'))
      throw new UsageError(`the path starts with / (e.g. /v1/balances), not "${path}"`, 'request');
    const dataText = ctx.str('data');
    if (dataText !== undefined && method === 'GET') throw new UsageError('a GET has no body (--data)', 'request');
    const body = dataText === undefined ? undefined : parseData(await readData(ctx, dataText));
    const answer = await ctx.client().request({
      method,
      path,
      body,
      onBehalfOf: ctx.str('member'),
      idempotencyKey: ctx.str('idempotency-key'),
    });
    ctx.result(answer ?? null);
  },
};

async function readData(ctx: Context, text: string): Promise<string> {
  if (text === '-') {
    let all = '';
    for await (const chunk of ctx.io.stdin) all += chunk.toString();
    return all;
  }
  if (text.startsWith('@')) {
    try {
      return readFileSync(text.slice(1), 'utf8');
    } catch (err) {
      throw new UsageError(`--data ${text}: ${(err as Error).message}`, 'request');
    }
  }
  return text;
}

function parseData(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--data is not JSON: ${(err as Error).message}`, 'request');
  }
}
