// A signed call to a running server with nothing but Node: the production check's client
// (scripts/check-production.sh), which runs where neither the SDK nor the dev dependencies are.
//
//   node scripts/signed-call.mjs CREDENTIALS_JSON URL [URL...]
//
// CREDENTIALS_JSON is a demo-credentials.json (client_id, api_key, signing_key of a sandbox key).
// A token is taken at the first URL; then, at each URL, a member is created by a signed write
// (201), and the same write with a wrong signature is refused (401 invalid_signature), so a server
// that does not check signatures fails. Several URLs are several processes on one database: the
// token taken at one is good at all. The signature follows src/platform/auth/signing.ts: HMAC-SHA256 under the
// signing key, Base64, of method, path with query, timestamp, nonce and the body's SHA-256 in hex,
// joined by line feeds.
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';

const [credentialsFile, ...urls] = process.argv.slice(2);
if (!credentialsFile || urls.length === 0) {
  console.error('usage: node scripts/signed-call.mjs CREDENTIALS_JSON URL [URL...]');
  process.exit(64);
}
const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8'));

/** One HTTP call; the Host header names the sandbox (the environment is chosen by the host). */
function call(baseUrl, method, path, headers, body = '') {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          host: `api-sandbox.localhost:${url.port}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        timeout: 30_000,
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode, text, json });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

function signature(method, pathWithQuery, timestamp, nonce, body) {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', credentials.signing_key)
    .update([method, pathWithQuery, timestamp, nonce, bodyHash].join('\n'))
    .digest('base64');
}

function expect(what, res, status, code) {
  if (res.status !== status || (code && res.json?.code !== code)) {
    throw new Error(
      `${what}: expected ${status}${code ? ` ${code}` : ''}, got ${res.status} ${res.text.slice(0, 500)}`,
    );
  }
}

const token = await call(urls[0], 'POST', '/v1/connect/token', {
  'x-client-id': credentials.client_id,
  'x-api-key': credentials.api_key,
});
expect('POST /v1/connect/token', token, 200);
const authorization = `Bearer ${token.json.auth_token}`;

for (const baseUrl of urls) {
  const signedWrite = (sign) => {
    const body = JSON.stringify({ external_member_id: `production-check-${randomUUID()}` });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomBytes(16).toString('hex');
    return call(
      baseUrl,
      'POST',
      '/v1/members',
      {
        authorization,
        'x-idempotency-key': randomUUID(),
        'x-timestamp': timestamp,
        'x-nonce': nonce,
        'x-signature': sign(signature('POST', '/v1/members', timestamp, nonce, body)),
      },
      body,
    );
  };
  const created = await signedWrite((s) => s);
  expect(`signed POST /v1/members at ${baseUrl}`, created, 201);
  // The same write signed with one character changed.
  const forged = await signedWrite((s) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1));
  expect(`POST /v1/members with a wrong signature at ${baseUrl}`, forged, 401, 'invalid_signature');
  console.log(
    `signed call at ${baseUrl}: member ${created.json.id} created (201); a wrong signature refused (401 ` +
      `invalid_signature)`,
  );
}
