/**
 * @merchant-wallet/cli: the `mwa` command (bin/mwa.js runs `main`). Its parts are exported for
 * programs and tests: `main(argv, io)` runs a command line and resolves with the exit status.
 */
export { main, commands, splitCommand, mainHelp, commandHelp, report } from './cli.js';
export { parseDuration, formatDuration, DurationError } from './duration.js';
export { configPath, readConfig, resolveCredentials, DEFAULT_BASE_URL } from './config.js';
export type { ConfigFile, Credentials, Profile } from './config.js';
export { EXIT_OK, EXIT_API_ERROR, EXIT_USAGE, UsageError, CommandError, processIo } from './io.js';
export type { Io } from './io.js';
export { CLI_VERSION } from './context.js';
export { triggerableTypes } from './commands/trigger.js';
export { parseTypes, matches } from './commands/listen.js';
export { payNowQr, crc16 } from './paynow.js';
export type { CommandSpec, OptionSpec } from './command.js';
