/** `mwa events list | get | replay`: the calls of extensions section 11. */
import type { CommandSpec } from '../command.js';
import { UsageError } from '../io.js';
import { parseTime } from '../time.js';

export const eventsList: CommandSpec = {
  name: 'events list',
  summary: 'List events, newest first (GET /v1/events)',
  usage:
    'events list [--type <type>] [--limit <n>] [--object-id <id>] [--since <time>] [--until <time>] ' +
    '[--delivery-success true|false]',
  details: [
    '--type is an exact type (deposit.credited) or a prefix ending in .* (card.*).',
    '--since / --until take an ISO 8601 time or a duration meaning that long ago (2h, 3d: on the sandbox ' +
      'clock in the sandbox).',
    '--delivery-success false: events whose webhook delivery failed (a record failed, dead or without subscriber).',
    '',
    'Examples:',
    '  mwa events list --type card.* --limit 5',
    '  mwa events list --delivery-success false --since 1d --json',
  ].join('\n'),
  options: {
    type: { type: 'string', placeholder: '<type>', description: 'An event type, or a prefix such as card.*' },
    limit: { type: 'string', placeholder: '<n>', description: 'How many events (default 20)' },
    'object-id': { type: 'string', placeholder: '<id>', description: 'The events of one object (data.id)' },
    since: { type: 'string', placeholder: '<time>', description: 'Created at or after' },
    until: { type: 'string', placeholder: '<time>', description: 'Created before' },
    'delivery-success': {
      type: 'string',
      placeholder: 'true|false',
      description: 'Only events whose deliveries all succeeded (true) or one failed (false)',
    },
  },
  run: async (ctx) => {
    const limitText = ctx.str('limit') ?? '20';
    if (!/^\d+$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 10_000)
      throw new UsageError('--limit: a whole number from 1 to 10000', 'events list');
    const limit = Number(limitText);
    const success = ctx.str('delivery-success');
    if (success !== undefined && success !== 'true' && success !== 'false')
      throw new UsageError('--delivery-success: true or false', 'events list');
    const since = ctx.str('since');
    const until = ctx.str('until');
    const filters = {
      type: ctx.str('type'),
      object_id: ctx.str('object-id'),
      created_gte: since === undefined ? undefined : await parseTime(ctx, since, '--since', 'events list'),
      created_lt: until === undefined ? undefined : await parseTime(ctx, until, '--until', 'events list'),
      delivery_success: success === undefined ? undefined : success === 'true',
    };
    const events = [];
    for await (const e of ctx.client().events.list({ ...filters, limit: Math.min(limit, 100) })) {
      events.push(e);
      if (events.length >= limit) break;
    }
    const lines = events.map(
      (e) => `${e.created_at}  ${e.event_type.padEnd(28)}  ${e.event_id}  ${e.data.id}  ${e.data.status}`,
    );
    ctx.result({ data: events }, lines.length ? lines.join('\n') : 'no events');
  },
};

export const eventsGet: CommandSpec = {
  name: 'events get',
  summary: 'Show one event (GET /v1/events/{id})',
  usage: 'events get <event_id>',
  positionals: { min: 1, max: 1, names: '<event_id>' },
  run: async (ctx) => {
    ctx.result(await ctx.client().events.get(ctx.positionals[0]!));
  },
};

export const eventsReplay: CommandSpec = {
  name: 'events replay',
  summary: "Deliver an endpoint's events again (POST /v1/webhooks/endpoints/{id}/replay)",
  usage: 'events replay <endpoint_id> --since <time> [--until <time>] [--all]',
  details: [
    'Queues a new delivery to the endpoint of every kept event in the range that it subscribes to;',
    'by default only those whose delivery to it did not succeed (--all: every one).',
    '',
    'Example: mwa events replay whe_0f8c... --since 6h',
  ].join('\n'),
  options: {
    since: {
      type: 'string',
      placeholder: '<time>',
      description: 'From this time (ISO 8601, or a duration ago such as 6h)',
    },
    until: { type: 'string', placeholder: '<time>', description: 'Up to this time (default: now)' },
    all: { type: 'boolean', description: 'Also the events already delivered' },
  },
  positionals: { min: 1, max: 1, names: '<endpoint_id>' },
  run: async (ctx) => {
    const since = ctx.str('since');
    if (since === undefined) throw new UsageError('--since is required', 'events replay');
    const until = ctx.str('until');
    const body = {
      since: await parseTime(ctx, since, '--since', 'events replay'),
      ...(until !== undefined ? { until: await parseTime(ctx, until, '--until', 'events replay') } : {}),
      only_failed: !ctx.flag('all'),
    };
    const res = await ctx.client().webhooks.replay(ctx.positionals[0]!, body);
    ctx.result(res, `queued ${res.queued} deliver${res.queued === 1 ? 'y' : 'ies'} to ${res.id}`);
  },
};
