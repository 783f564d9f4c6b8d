/** What a command reads and writes: the process's streams and environment, replaceable in tests. */

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** For `mwa login`'s prompts and `--data -`. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
}

export function processIo(): Io {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    stdin: process.stdin,
  };
}

/** Exit statuses: 0 done, 1 the API (or the network) refused or failed, 2 the command line was wrong. */
export const EXIT_OK = 0;
export const EXIT_API_ERROR = 1;
export const EXIT_USAGE = 2;

/** A mistake in the command line (or missing credentials): exit status 2, with the command's usage hint. */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

/**
 * A failure that is not the API's and not the command line's (a trigger that did not reach its state): exit status 1.
 */
export class CommandError extends Error {
  override name = 'CommandError';
}
