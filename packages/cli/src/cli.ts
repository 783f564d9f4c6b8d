/**
 * `mwa`: finds the command in the arguments, parses its options (node:util parseArgs), runs it, and maps failures to
 * exit statuses.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MerchantWalletError } from '@merchant-wallet/sdk';
import type { CommandSpec, OptionSpec } from './command.js';
import { clockAdvance, clockShow } from './commands/clock.js';
import { eventsGet, eventsList, eventsReplay } from './commands/events.js';
import { listen } from './commands/listen.js';
import { login } from './commands/login.js';
import { request } from './commands/request.js';
import { trigger } from './commands/trigger.js';
import { DEFAULT_BASE_URL } from './config.js';
import { CLI_VERSION, Context } from './context.js';
import { CommandError, EXIT_API_ERROR, EXIT_OK, EXIT_USAGE, processIo, UsageError, type Io } from './io.js';

export const commands: CommandSpec[] = [
  listen,
  trigger,
  clockShow,
  clockAdvance,
  eventsList,
  eventsGet,
  eventsReplay,
  request,
  login,
];

/** Words that only group subcommands (`mwa events` alone is not a command). */
const groups: Record<string, string> = { events: 'List, show and replay events' };

export const globalOptions: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: 'Machine-readable output: JSON, one document per line' },
  profile: {
    type: 'string',
    placeholder: '<name>',
    description: 'The config file\'s profile (default $MWA_PROFILE, else "default")',
  },
  help: { type: 'boolean', short: 'h', description: 'Show help' },
  version: { type: 'boolean', description: 'Print the version' },
};

const byName = new Map(commands.map((c) => [c.name, c]));

/** The command words at the front of `argv` (options may come first), and the rest for parseArgs. */
export function splitCommand(argv: string[]): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (a.startsWith('-') && a !== '-') {
      rest.push(a);
      if (a === '--profile' && i + 1 < argv.length) rest.push(argv[++i]!);
      continue;
    }
    const candidate = [...words, a].join(' ');
    const extends_ =
      words.length === 0 || [...byName.keys()].some((n) => n === candidate || n.startsWith(`${candidate} `));
    if (extends_ && (words.length === 0 || byName.has(candidate) || groups[candidate] !== undefined)) {
      words.push(a);
      continue;
    }
    rest.push(...argv.slice(i));
    break;
  }
  return { words, rest };
}

function optionConfig(spec: CommandSpec | undefined): NonNullable<ParseArgsConfig['options']> {
  const all = { ...globalOptions, ...(spec?.options ?? {}) };
  return Object.fromEntries(
    Object.entries(all).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}) }]),
  );
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, o]) => [
    `${o.short ? `-${o.short}, ` : '    '}--${name}${o.placeholder ? ` ${o.placeholder}` : ''}`,
    o.description,
  ]);
  const width = Math.max(...rows.map((r) => r[0]!.length));
  return rows.map(([a, b]) => `  ${a!.padEnd(width)}  ${b}`);
}

export function mainHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'mwa: the Merchant Wallet API from a terminal',
    '',
    'Usage: mwa <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Global options (every command):',
    ...optionLines(globalOptions),
    '',
    'Credentials: MWA_CLIENT_ID, MWA_API_KEY, MWA_SIGNING_KEY and MWA_BASE_URL',
    `(default ${DEFAULT_BASE_URL}), or a profile saved by mwa login; the variables win.`,
    'A *.localhost base URL connects to 127.0.0.1 and sends its host name (RFC 6761).',
    'Exit status: 0 done, 1 an API error, 2 a usage error.',
    '',
    "mwa <command> --help shows a command's options and examples.",
  ].join('\n');
}

export function commandHelp(spec: CommandSpec): string {
  return [
    `mwa ${spec.name}: ${spec.summary}`,
    '',
    `Usage: mwa ${spec.usage}`,
    ...(spec.details ? ['', spec.details] : []),
    ...(spec.options ? ['', 'Options:', ...optionLines(spec.options)] : []),
    '',
    'Global options:',
    ...optionLines(globalOptions),
  ].join('\n');
}

function groupHelp(group: string): string {
  const subs = commands.filter((c) => c.name.startsWith(`${group} `));
  const width = Math.max(...subs.map((c) => c.name.length));
  return [
    `mwa ${group}: ${groups[group]}`,
    '',
    'Commands:',
    ...subs.map((c) => `  mwa ${c.name.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

/** Runs `mwa` with these arguments; resolves with the exit status. */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const json = argv.includes('--json');
  let ctx: Context | undefined;
  try {
    if (argv.includes('--version') && !argv.includes('--')) {
      io.stdout(json ? `${JSON.stringify({ version: CLI_VERSION })}\n` : `mwa ${CLI_VERSION}\n`);
      return EXIT_OK;
    }
    let { words, rest } = splitCommand(argv);
    if (words[0] === 'help') {
      ({ words } = splitCommand(argv.slice(argv.indexOf('help') + 1)));
      rest = ['--help'];
    }
    const name = words.join(' ');
    const spec = byName.get(name);
    const wantsHelp = rest.includes('--help') || rest.includes('-h');
    if (words.length === 0) {
      if (wantsHelp || argv.length === 0) {
        io.stdout(`${mainHelp()}\n`);
        return argv.length === 0 ? EXIT_USAGE : EXIT_OK;
      }
      throw new UsageError(`no command in "${argv.join(' ')}"`);
    }
    if (!spec) {
      if (groups[name] !== undefined) {
        if (wantsHelp) {
          io.stdout(`${groupHelp(name)}\n`);
          return EXIT_OK;
        }
        throw new UsageError(
          `"mwa ${name}" needs a command: ${commands
            .filter((c) => c.name.startsWith(`${name} `))
            .map((c) => c.name.split(' ')[1])
            .join(', ')}`,
          name,
        );
      }
      throw new UsageError(`unknown command "${name}"`);
    }
    if (wantsHelp) {
      io.stdout(`${commandHelp(spec)}\n`);
      return EXIT_OK;
    }
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: optionConfig(spec), allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''), spec.name);
    }
    const { min, max, names } = spec.positionals ?? { min: 0, max: 0 };
    if (parsed.positionals.length < min) throw new UsageError(`missing ${names ?? 'arguments'}`, spec.name);
    if (parsed.positionals.length > max)
      throw new UsageError(`unexpected argument "${parsed.positionals[max]}"`, spec.name);
    ctx = new Context(io, parsed.values as Context['values'], parsed.positionals);
    return (await spec.run(ctx)) ?? EXIT_OK;
  } catch (err) {
    return report(err, io, json);
  } finally {
    ctx?.close();
  }
}

/** The failure on stderr (JSON with --json) and its exit status. */
export function report(err: unknown, io: Io, json: boolean): number {
  if (err instanceof UsageError) {
    const hint = `Run "mwa ${err.command ? `${err.command} ` : ''}--help" for usage.`;
    io.stderr(
      json
        ? `${JSON.stringify({ error: { kind: 'usage', message: err.message } })}\n`
        : `mwa: ${err.message}\n${hint}\n`,
    );
    return EXIT_USAGE;
  }
  if (err instanceof MerchantWalletError) {
    const e = {
      kind: 'api',
      status: err.status,
      type: err.type,
      code: err.code,
      message: err.message,
      request_id: err.requestId || undefined,
    };
    io.stderr(
      json ? `${JSON.stringify({ error: e })}\n` : `mwa: ${err.status ? `${err.status} ` : ''}${err.message}\n`,
    );
    return EXIT_API_ERROR;
  }
  const message = err instanceof Error ? err.message : String(err);
  const kind = err instanceof CommandError ? 'command' : 'internal';
  io.stderr(json ? `${JSON.stringify({ error: { kind, message } })}\n` : `mwa: ${message}\n`);
  if (kind === 'internal' && io.env['MWA_DEBUG'] && err instanceof Error) io.stderr(`${err.stack}\n`);
  return EXIT_API_ERROR;
}
