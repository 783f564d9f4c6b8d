/** The shape of a command: its words, help, options, and what it runs. */
import type { Context } from './context.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Shown in the help: `--events <types>`. */
  placeholder?: string;
  description: string;
}

export interface CommandSpec {
  /** The words after `mwa`: `listen`, `clock advance`, `events list`. */
  name: string;
  summary: string;
  /** The usage line without `mwa `, e.g. `listen --forward-to <url> [--events <types>]`. */
  usage: string;
  /** Paragraphs after the usage line: details and examples. */
  details?: string;
  options?: Record<string, OptionSpec>;
  /** How many positional arguments it takes. */
  positionals?: { min: number; max: number; names?: string };
  run(ctx: Context): Promise<number | void>;
}
