import type { RunningService } from '../../src/server.js';
import { rawRequest, type RawResponse } from './raw-http.js';

/**
 * Driving the hosted pages over plain HTTP, as a browser without JavaScript would: the page is
 * requested on the host of its `hosted_url` (the Host header; the socket goes to the service),
 * the CSRF cookie and hidden field are kept, forms are posted URL-encoded or multipart.
 */

/** The hosted-screen key every KYC test service gets (tests pass a fixed one; production sets HOSTED_SCREEN_KEY). */
export const testHostedScreenKey = Buffer.alloc(32, 0x5a);

export interface HostedPage extends RawResponse {
  /** The CSRF cookie (`name=value`) the page set or was sent with. */
  cookie: string | undefined;
  /** The hidden field of the page's form. */
  csrfToken: string | undefined;
}

function target(service: RunningService, hostedUrl: string): { url: string; host: string; path: string } {
  const u = new URL(hostedUrl);
  return { url: `${service.publicUrl}${u.pathname}`, host: u.host, path: u.pathname };
}

export async function getHostedPage(
  service: RunningService,
  hostedUrl: string,
  opts: { host?: string; cookie?: string } = {},
): Promise<HostedPage> {
  const t = target(service, hostedUrl);
  const res = await rawRequest(t.url, {
    headers: { host: opts.host ?? t.host, ...(opts.cookie ? { cookie: opts.cookie } : {}) },
  });
  const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0];
  const cookie = setCookie ? setCookie.split(';')[0] : opts.cookie;
  const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(res.text)?.[1];
  return { ...res, cookie, csrfToken };
}

export interface FileInput {
  name: string;
  filename: string;
  type: string;
  data: Uint8Array;
}

/** Posts a form to a hosted page: multipart when files are given, URL-encoded otherwise. */
export async function postHostedPage(
  service: RunningService,
  hostedUrl: string,
  form: { fields: Record<string, string>; files?: FileInput[]; cookie?: string; host?: string },
): Promise<RawResponse> {
  const t = target(service, hostedUrl);
  const headers: Record<string, string> = {
    host: form.host ?? t.host,
    ...(form.cookie ? { cookie: form.cookie } : {}),
  };
  let body: Buffer;
  if (form.files) {
    const fd = new FormData();
    for (const [k, v] of Object.entries(form.fields)) fd.append(k, v);
    for (const f of form.files) fd.append(f.name, new Blob([Buffer.from(f.data)], { type: f.type }), f.filename);
    const req = new Request('http://multipart.invalid/', { method: 'POST', body: fd });
    body = Buffer.from(await req.arrayBuffer());
    headers['content-type'] = req.headers.get('content-type')!;
  } else {
    body = Buffer.from(new URLSearchParams(form.fields).toString());
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  headers['content-length'] = String(body.length);
  return rawRequest(t.url, { method: 'POST', headers, body });
}

/** A tiny valid PNG (1x1) and JPEG header bytes: enough for the type check by signature. */
export const pngBytes = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
export const jpegBytes = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
  Buffer.from('JFIF\0test-jpeg-body'),
  Buffer.from([0xff, 0xd9]),
]);
