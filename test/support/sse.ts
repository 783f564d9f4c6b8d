import { request, type IncomingMessage, type ClientRequest } from 'node:http';

/** One server-sent event as read off the wire. */
export interface SseEvent {
  id: string;
  event: string;
  data: string;
}

/**
 * A bare server-sent events reader for tests (no SDK: it reads the wire as the reference defines
 * it): connects with a token, parses frames, keeps the events and comment lines.
 */
export interface SseConnection {
  status: number;
  headers: IncomingMessage['headers'];
  events: SseEvent[];
  comments: string[];
  /** The body, when the answer was not a stream (an error envelope). */
  body: string;
  ended: Promise<void>;
  waitFor(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

export async function openSse(
  baseUrl: string,
  token: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseConnection> {
  const url = new URL(path, baseUrl);
  let req!: ClientRequest;
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    req = request(
      {
        host: '127.0.0.1',
        port: url.port,
        path: url.pathname + url.search,
        headers: { host: url.host, 'x-auth-token': `Bearer ${token}`, accept: 'text/event-stream', ...headers },
      },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
  const conn: SseConnection = {
    status: res.statusCode ?? 0,
    headers: res.headers,
    events: [],
    comments: [],
    body: '',
    ended: new Promise<void>((resolve) => {
      res.on('end', resolve);
      res.on('close', resolve);
      res.on('error', () => resolve());
    }),
    async waitFor(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (conn.events.length < count) {
        if (Date.now() > deadline)
          throw new Error(`stream: ${conn.events.length} of ${count} events after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return conn.events.slice(0, count);
    },
    close() {
      req.destroy();
    },
  };
  let buffer = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    conn.body += chunk;
    buffer += chunk;
    let at: number;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const ev: Partial<SseEvent> = {};
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) conn.comments.push(line.slice(1).trim());
        else if (line.startsWith('id: ')) ev.id = line.slice(4);
        else if (line.startsWith('event: ')) ev.event = line.slice(7);
        else if (line.startsWith('data: ')) ev.data = line.slice(6);
      }
      if (ev.id !== undefined) conn.events.push(ev as SseEvent);
    }
  });
  return conn;
}
