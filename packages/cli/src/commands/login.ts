/** `mwa login`: checks a key (a token exchange) and saves it to a profile of the config file, mode 0600. */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { CommandSpec } from '../command.js';
import { checkBaseUrl, DEFAULT_BASE_URL, type Credentials } from '../config.js';
import { newClient, type Context } from '../context.js';
import { UsageError } from '../io.js';

export const login: CommandSpec = {
  name: 'login',
  summary: 'Check an API key and save it to a profile',
  usage: 'login [--base-url <url>] [--client-id <id>] [--profile <name>] [--no-verify]',
  details: [
    'Each value comes from its option, else from MWA_BASE_URL, MWA_CLIENT_ID, MWA_API_KEY, MWA_SIGNING_KEY,',
    'else from a prompt (the secrets without echo) when the terminal is interactive. The API key and the signing',
    'key are never printed. The key is checked with a token exchange first (--no-verify skips it).',
    'The profile goes to $XDG_CONFIG_HOME/mwa/config.json (else ~/.config/mwa/config.json), readable by you only.',
    '',
    'Examples:',
    '  mwa login --base-url http://api-sandbox.localhost:8080 --client-id cli_...',
    '  MWA_CLIENT_ID=... MWA_API_KEY=... MWA_SIGNING_KEY=... mwa login --profile ci',
  ].join('\n'),
  options: {
    'base-url': {
      type: 'string',
      placeholder: '<url>',
      description: `The API's base URL (default ${DEFAULT_BASE_URL})`,
    },
    'client-id': { type: 'string', placeholder: '<id>', description: "The key's client_id" },
    'api-key': {
      type: 'string',
      placeholder: '<key>',
      description: 'The api_key (prefer the prompt or MWA_API_KEY: arguments are visible to other users)',
    },
    'signing-key': { type: 'string', placeholder: '<key>', description: 'The signing_key (same caution)' },
    'no-verify': { type: 'boolean', description: 'Save without the token exchange' },
  },
  run: async (ctx) => {
    const env = ctx.io.env;
    const existing = ctx.readConfig().profiles[ctx.profile];
    const prompts = new Prompter(ctx);
    try {
      const baseUrl =
        ctx.str('base-url') ??
        env['MWA_BASE_URL'] ??
        (await prompts.ask('Base URL', false, existing?.base_url ?? DEFAULT_BASE_URL));
      checkBaseUrl(baseUrl);
      const clientId =
        ctx.str('client-id') ?? env['MWA_CLIENT_ID'] ?? (await prompts.ask('Client ID', false, existing?.client_id));
      const apiKey = ctx.str('api-key') ?? env['MWA_API_KEY'] ?? (await prompts.ask('API key', true));
      const signingKey = ctx.str('signing-key') ?? env['MWA_SIGNING_KEY'] ?? (await prompts.ask('Signing key', true));
      const creds: Credentials = { baseUrl, clientId, apiKey, signingKey };
      let scopes: string[] | undefined;
      if (!ctx.flag('no-verify')) {
        const client = newClient(creds);
        try {
          await client.getToken();
          scopes = client.tokenInfo()?.scopes;
        } finally {
          client.close();
        }
      }
      ctx.updateProfile((p) => ({
        ...p,
        base_url: baseUrl,
        client_id: clientId,
        api_key: apiKey,
        signing_key: signingKey,
      }));
      const summary = {
        profile: ctx.profile,
        base_url: baseUrl,
        client_id: clientId,
        verified: scopes !== undefined,
        scopes,
        config_path: ctx.configPath,
      };
      ctx.result(
        summary,
        [
          `Saved profile "${ctx.profile}" to ${ctx.configPath} (mode 0600).`,
          `  base URL   ${baseUrl}`,
          `  client ID  ${clientId}`,
          scopes
            ? `  checked: a token was issued with ${scopes.length} scope${scopes.length === 1 ? '' : 's'}`
            : '  not checked (--no-verify)',
        ].join('\n'),
      );
    } finally {
      prompts.close();
    }
  },
};

/** Questions on the terminal; the answers to secret ones are not echoed. */
class Prompter {
  private rl: ReturnType<typeof createInterface> | undefined;
  private muted = false;

  constructor(private readonly ctx: Context) {}

  async ask(label: string, secret: boolean, fallback?: string): Promise<string> {
    const option = `--${label.toLowerCase().replace(/ /g, '-')}`;
    if (!this.ctx.io.stdin.isTTY) {
      if (fallback !== undefined) return fallback;
      throw new UsageError(
        `${label} missing: give ${option} or set MWA_${label.toUpperCase().replace(/ /g, '_')} (no terminal to ask on)`,
        'login',
      );
    }
    const err = this.ctx.io.stderr;
    const output = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        if (!this.muted) err(chunk.toString());
        done();
      },
    });
    this.rl ??= createInterface({ input: this.ctx.io.stdin, output, terminal: true });
    this.muted = false;
    const question = `${label}${fallback ? ` [${fallback}]` : ''}: `;
    const answer = await new Promise<string>((resolve) => {
      this.rl!.question(question, resolve);
      this.muted = secret;
    });
    this.muted = false;
    if (secret) err('\n');
    const value = answer.trim() || fallback;
    if (!value) throw new UsageError(`${label} missing`, 'login');
    return value;
  }

  close(): void {
    this.rl?.close();
  }
}
