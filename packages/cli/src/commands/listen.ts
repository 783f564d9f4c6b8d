/**
 * `mwa listen --forward-to <url>`: follows GET /v1/events/stream and POSTs each event to a local
 * URL as a signed Standard Webhooks request. The SDK's event stream reconnects by itself and
 * resumes after the last event received (Last-Event-ID): no event is lost or forwarded twice.
 */
import type { ApiEvent } from '@merchant-wallet/sdk';
import type { CommandSpec } from '../command.js';
import { newWebhookSecret } from '../config.js';
import type { Context } from '../context.js';
import { forwardEvent } from '../forward.js';
import { UsageError } from '../io.js';

const TYPE_PATTERN = /^(\*|[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*(\.\*)?)$/;

export const listen: CommandSpec = {
  name: 'listen',
  summary: 'Forward live events to a local URL, signed as webhooks',
  usage: 'listen --forward-to <url> [--events <types>] [--print-secret]',
  details: [
    "Follows the event stream of the key's merchant and environment and POSTs each new event to <url>",
    'as a Standard Webhooks request (webhook-id, webhook-timestamp, webhook-signature), signed with the',
    'secret printed at start. The secret is kept in the profile, so that it stays the same from one run',
    'to the next; --print-secret prints it and exits. One line per event: time, type, event id, and the',
    "local answer's status. A dropped connection is resumed after the last event received (Last-Event-ID),",
    'without losing or repeating an event. Ctrl-C stops.',
    '',
    'With --json, stdout has one JSON object per line: {ready, forward_to, events, secret} first, then one',
    'per event {time, event_type, event_id, object_id, status, error?, ms}, and {disconnected, retry_in_ms} /',
    '{reconnected, last_event_id} when the connection drops and comes back.',
    '',
    '--events: types separated by commas; each an exact type or a prefix ending in .* (default: every event).',
    '',
    'Examples:',
    '  mwa listen --forward-to http://localhost:3000/webhooks',
    '  mwa listen --forward-to http://localhost:3000/webhooks --events deposit.credited,withdrawal.*',
  ].join('\n'),
  options: {
    'forward-to': { type: 'string', short: 'f', placeholder: '<url>', description: 'Where to POST each event' },
    events: {
      type: 'string',
      short: 'e',
      placeholder: '<types>',
      description: 'Only these types (comma-separated; prefix.* allowed)',
    },
    'print-secret': { type: 'boolean', description: 'Print the signing secret and exit' },
  },
  run: async (ctx) => {
    const secret = listenSecret(ctx);
    if (ctx.flag('print-secret')) {
      ctx.result({ secret }, secret);
      return;
    }
    const target = ctx.str('forward-to');
    if (target === undefined) throw new UsageError('--forward-to <url> is required', 'listen');
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new UsageError(`--forward-to: "${target}" is not a URL`, 'listen');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new UsageError('--forward-to: an http or https URL', 'listen');
    const types = parseTypes(ctx.str('events'));
    const client = ctx.client();

    let ready = false;
    const stream = client.events.stream({
      // One filter goes to the server; several are applied here.
      type: types.length === 1 ? types[0] : undefined,
      signal: ctx.abort.signal,
      onOpen: ({ reconnects, lastEventId }) => {
        if (!ready) {
          ready = true;
          if (ctx.json)
            ctx.io.stdout(
              JSON.stringify({ ready: true, forward_to: url.href, events: types.length ? types : ['*'], secret }) +
                '\n',
            );
          else
            ctx.io.stderr(
              `Ready. Forwarding ${types.length ? types.join(', ') : 'every event'} to ${url.href}\nWebhook ` +
                `signing secret: ${secret}\n`,
            );
        } else if (ctx.json) {
          ctx.io.stdout(`${JSON.stringify({ reconnected: reconnects, last_event_id: lastEventId ?? null })}\n`);
        } else {
          ctx.note(`reconnected (${reconnects}), resuming after ${lastEventId ?? 'the start'}`);
        }
      },
      onDisconnect: ({ error, delayMs }) => {
        const e = error as { code?: string; message?: string };
        const why = e?.code ?? e?.message ?? String(error);
        if (ctx.json) ctx.io.stdout(`${JSON.stringify({ disconnected: why, retry_in_ms: delayMs })}\n`);
        else ctx.note(`connection lost (${why}); reconnecting in ${(delayMs / 1000).toFixed(1)} s`);
      },
    });
    await ctx.untilInterrupted(async () => {
      for await (const event of stream) {
        if (!matches(types, event.event_type)) continue;
        await forwardOne(ctx, url, secret, event);
      }
    });
    ctx.note('stopped');
    return 0;
  },
};

async function forwardOne(ctx: Context, url: URL, secret: string, event: ApiEvent): Promise<void> {
  const result = await forwardEvent(url, secret, event, JSON.stringify(event));
  const time = new Date().toISOString();
  if (ctx.json) {
    ctx.io.stdout(
      JSON.stringify({
        time,
        event_type: event.event_type,
        event_id: event.event_id,
        object_id: event.data.id,
        status: result.status ?? null,
        ...(result.error ? { error: result.error } : {}),
        ms: result.ms,
      }) + '\n',
    );
  } else {
    const answer = result.status !== undefined ? `[${result.status}]` : `[error ${result.error}]`;
    ctx.io.stdout(`${time}  ${event.event_type.padEnd(28)}  ${event.event_id}  ${answer}\n`);
  }
}

/** The profile's listen secret, made and saved on first use. */
function listenSecret(ctx: Context): string {
  const saved = ctx.readConfig().profiles[ctx.profile]?.listen_secret;
  if (saved) return saved;
  const secret = newWebhookSecret();
  ctx.updateProfile((p) => ({ ...p, listen_secret: secret }));
  return secret;
}

export function parseTypes(text: string | undefined): string[] {
  if (text === undefined) return [];
  const types = text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  for (const t of types)
    if (!TYPE_PATTERN.test(t))
      throw new UsageError(`--events: "${t}" is not an event type or a prefix such as card.*`, 'listen');
  return types.includes('*') ? [] : types;
}

export function matches(types: string[], type: string): boolean {
  if (types.length === 0) return true;
  return types.some((t) => (t.endsWith('.*') ? type.startsWith(t.slice(0, -1)) : t === type));
}
