/** A whole number as a variable writes it: digits only (`1e3`, `0x10`, `1.5` are refused). */
export const wholeNumber = /^[0-9]+$/;

/** Reads variables for loadConfig (config.ts), collecting a problem per bad value instead of stopping at the first. */
export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Readonly<Record<string, string | undefined>>) {}

  /** The trimmed value, or undefined when unset or empty (empty means "use the default"). */
  raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  /** Records that `name` holds a bad value. Secrets are not repeated in the message. */
  refuse(name: string, allowed: string, options: { secret?: boolean } = {}): void {
    const value = this.env[name] ?? '';
    this.problems.push(
      `${name} must be ${allowed}; ` +
        `got ${options.secret ? `a value of ${value.length} characters` : JSON.stringify(value)}`,
    );
  }

  int(name: string, fallback: number, min: number, max: number, unit = ''): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const n = wholeNumber.test(value) ? Number(value) : NaN;
    if (Number.isSafeInteger(n) && n >= min && n <= max) return n;
    this.refuse(name, `a whole number from ${min} to ${max}${unit}`);
    return fallback;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if ((values as readonly string[]).includes(value)) return value as T;
    this.refuse(name, `one of ${values.join(', ')}`);
    return fallback;
  }

  text(name: string, fallback: string, valid: (value: string) => boolean, allowed: string): string;
  text(
    name: string,
    fallback: undefined,
    valid: (value: string) => boolean,
    allowed: string,
    options?: { secret?: boolean },
  ): string | undefined;
  text(
    name: string,
    fallback: string | undefined,
    valid: (value: string) => boolean,
    allowed: string,
    options: { secret?: boolean } = {},
  ): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (valid(value)) return value;
    this.refuse(name, allowed, options);
    return fallback;
  }

  /** Comma-separated, empty items dropped; every item must pass `valid`. */
  list(name: string, valid: (item: string) => boolean, allowed: string): string[] {
    const items = (this.raw(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (items.every(valid)) return items;
    this.refuse(name, allowed);
    return [];
  }

  /** Runs a parser that throws with its own message (which names the variable). */
  parsed<T>(parse: () => T, fallback: T): T {
    try {
      return parse();
    } catch (err) {
      this.problems.push(err instanceof Error ? err.message : String(err));
      return fallback;
    }
  }
}
