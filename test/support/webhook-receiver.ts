import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

/** The fields of a webhook's body, sorted (docs/webhooks.md): ids and status only. */
export const webhookBodyFields = ['created_at', 'data', 'event_id', 'event_type', 'livemode', 'merchant_id'];
/** The fields of a webhook body's `data`, sorted. */
export const webhookDataFields = ['external_member_id', 'id', 'object', 'status', 'status_version'];

/**
 * What the receiver does with one request: a status (answered with body `ok`), or a function that
 * answers itself (a redirect with its Location, or no answer at all to make the sender time out).
 */
export type Answer = number | ((res: ServerResponse) => void);

/** A real HTTP receiver on 127.0.0.1; `answer` decides each answer (default 200). */
export async function startReceiver(answer: (r: Received) => Answer | Promise<Answer> = () => 200) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '' };
      received.push(r);
      const a = await answer(r);
      if (typeof a === 'function') return a(res);
      res.statusCode = a;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Drives the fan-out ticker and the job queue of a service started with `workers: false` until
 * `done` holds (bounded: 15 s by default).
 */
export async function pumpWebhooks(
  service: { workers: { tick(): Promise<unknown>; jobs: { drain(ms?: number): Promise<unknown> } } },
  done: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await service.workers.tick();
    await service.workers.jobs.drain(5_000);
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('pump: condition not reached in time');
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Runs `run` with a receiver answering as `answer` says (default 200), closed afterwards whatever happens. */
export async function withReceiver<T>(run: (receiver: Receiver) => Promise<T>): Promise<T>;
export async function withReceiver<T>(
  answer: (r: Received) => Answer | Promise<Answer>,
  run: (receiver: Receiver) => Promise<T>,
): Promise<T>;
export async function withReceiver<T>(
  first: ((r: Received) => Answer | Promise<Answer>) | ((receiver: Receiver) => Promise<T>),
  second?: (receiver: Receiver) => Promise<T>,
): Promise<T> {
  const receiver = await startReceiver(second ? (first as (r: Received) => Answer | Promise<Answer>) : undefined);
  try {
    return await (second ?? (first as (receiver: Receiver) => Promise<T>))(receiver);
  } finally {
    await receiver.close();
  }
}

/**
 * Runs `run` with a receiver answering `status` until the test sets another with `answerWith`: an
 * endpoint that fails and recovers (or starts failing) in the middle of a test.
 */
export function withStatusReceiver<T>(
  status: number,
  run: (receiver: Receiver, answerWith: (status: number) => void) => Promise<T>,
): Promise<T> {
  let current = status;
  return withReceiver(
    () => current,
    (receiver) => run(receiver, (next) => (current = next)),
  );
}
