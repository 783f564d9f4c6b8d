import type { RunningService } from '../../src/server.js';
import { admin } from './service.js';

/**
 * The merchant console from a test: invite a user through the operator API, set the password
 * through the invite link, sign in with a small cookie jar (plain fetch, no browser).
 */

export const consolePassword = 'a long enough passphrase';

export interface ConsoleBrowser {
  cookies: Map<string, string>;
  request(
    method: 'GET' | 'POST',
    path: string,
    form?: Record<string, string | string[]>,
  ): Promise<{ status: number; body: string; location: string | null }>;
  /** The CSRF field of the page at `path` (the first form's). */
  csrfOf(path: string): Promise<string>;
  /** POSTs `fields` to `path` with the CSRF field of the page at `formPage` (`path` itself unless named). */
  submit(
    path: string,
    fields?: Record<string, string | string[]>,
    formPage?: string,
  ): Promise<{ status: number; body: string; location: string | null }>;
}

/** A browser with a cookie jar; `forwardedFor` is the address it appears from to a service that trusts the loopback
 * proxy. */
export function consoleClient(service: RunningService, options: { forwardedFor?: string } = {}): ConsoleBrowser {
  const cookies = new Map<string, string>();
  const jar: ConsoleBrowser = {
    cookies,
    async request(method, path, form) {
      const body = form
        ? new URLSearchParams(
            Object.entries(form).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
          ).toString()
        : undefined;
      const res = await fetch(`${service.publicUrl}${path}`, {
        method,
        redirect: 'manual',
        headers: {
          ...(cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          ...(options.forwardedFor ? { 'x-forwarded-for': options.forwardedFor } : {}),
        },
        body,
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        const name = pair!.slice(0, eq);
        const value = pair!.slice(eq + 1);
        if (value === '' || /Max-Age=0/i.test(line)) cookies.delete(name);
        else cookies.set(name, value);
      }
      return { status: res.status, body: await res.text(), location: res.headers.get('location') };
    },
    async csrfOf(path) {
      const page = await jar.request('GET', path);
      const m = /name="csrf_token" value="([^"]+)"/.exec(page.body);
      if (!m) throw new Error(`no CSRF field on ${path} (${page.status}): ${page.body.slice(0, 300)}`);
      return m[1]!;
    },
    async submit(path, fields = {}, formPage = path) {
      return jar.request('POST', path, { csrf_token: await jar.csrfOf(formPage), ...fields });
    },
  };
  return jar;
}

export async function inviteConsoleUser(
  service: RunningService,
  merchantId: string,
  email: string,
  role: 'owner' | 'developer' | 'viewer',
) {
  const res = await admin<{ id: string; invite_path: string }>(
    service,
    'POST',
    `/admin/v1/merchants/${merchantId}/console-users`,
    { email, role },
  );
  if (res.status !== 201) throw new Error(`invite failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Invited and password (`consolePassword`) set, not signed in: the invite. */
export async function consoleUserWithPassword(
  ...[service, merchantId, email, role]: Parameters<typeof inviteConsoleUser>
) {
  const invite = await inviteConsoleUser(service, merchantId, email, role);
  const set = await consoleClient(service).request('POST', invite.invite_path, {
    password: consolePassword,
    confirmation: consolePassword,
  });
  if (set.status !== 200) throw new Error(`password not set: ${set.status}`);
  return invite;
}

/** Invited, password set, signed in: a cookie jar holding a session. */
export async function signedInConsole(...[service, merchantId, email, role]: Parameters<typeof inviteConsoleUser>) {
  const invite = await consoleUserWithPassword(service, merchantId, email, role);
  const jar = consoleClient(service);
  const res = await jar.submit('/console/sign-in', { email, password: consolePassword });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status} ${res.body.slice(0, 300)}`);
  return { jar, userId: invite.id, invitePath: invite.invite_path };
}

/** The secret an authenticator app reads from the base32 text the set-up page shows (RFC 4648, no padding). */
export function authenticatorSecret(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of text) {
    value = (value << 5) | alphabet.indexOf(c);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
