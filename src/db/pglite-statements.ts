import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';

type Message = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

interface Prepared {
  name: string;
  /** The parameters' type OIDs, to serialize each value as `query` would. */
  paramTypes: number[];
  /** The statement's RowDescription (absent for a statement that returns no rows). */
  rowDescription: Message | undefined;
}

export interface StatementResult {
  command: string;
  rowCount: number;
  rows: unknown[];
}

/** Statements held prepared in the embedded database; past this, statements run unprepared. */
export const embeddedPreparedMax = 500;

/**
 * Data statements on the embedded database as named prepared statements (docs/performance.md,
 * "Request pipeline and the authenticated read"). `PGlite.query` parses, plans and describes
 * the text on every call, in six calls into the WebAssembly backend (Parse, Describe, Bind,
 * Describe, Execute, Sync), which was most of an embedded read's CPU. Here a statement is parsed
 * and described once (its name a counter, its parameter types and row description kept), and
 * each call is one message (Bind, Execute, Sync) answered in one pass. Values are serialized and
 * rows parsed by PGlite's own serializers, parsers and result parser, as `query` does; errors are
 * PGlite's DatabaseError with `query` and `params`, as `query` throws them. Runs under PGlite's
 * query lock; the caller (the one-connection pool) keeps a transaction's statements together.
 */
export class EmbeddedStatements {
  private readonly prepared = new Map<string, Prepared>();
  private counter = 0;

  constructor(private readonly pglite: PGlite) {}

  /** Whether the text is held, or may still be (a bounded number are). */
  canPrepare(text: string): boolean {
    return this.prepared.has(text) || this.prepared.size < embeddedPreparedMax;
  }

  run(text: string, params: readonly unknown[]): Promise<StatementResult> {
    const pglite = this.pglite;
    return pglite._runExclusiveQuery(async () => {
      let statement = this.prepared.get(text);
      try {
        if (!statement) statement = await this.prepare(text);
        const values = params.map((value, i) => {
          if (value === null || value === undefined) return null;
          const serialize = pglite.serializers[statement!.paramTypes[i]!];
          return serialize ? serialize(value) : String(value);
        });
        const messages = await pglite.execProtocolStream(
          concat([
            protocol.serialize.bind({ statement: statement.name, values: values as string[] }),
            protocol.serialize.execute({}),
            protocol.serialize.sync(),
          ]),
          { syncToFs: false },
        );
        if (!pglite.isInTransaction()) await pglite.syncToFs();
        const result: Results = parse.parseResults(
          statement.rowDescription ? [statement.rowDescription, ...messages] : messages,
          pglite.parsers,
        )[0]!;
        return {
          command: result.command ?? 'SELECT',
          rowCount: result.affectedRows ?? result.rows.length,
          rows: result.rows,
        };
      } catch (err) {
        if (err && typeof err === 'object' && 'code' in err) Object.assign(err, { query: text, params });
        throw err;
      }
    });
  }

  private async prepare(text: string): Promise<Prepared> {
    const name = `mwa_${++this.counter}`;
    const messages = await this.pglite.execProtocolStream(
      concat([
        protocol.serialize.parse({ name, text }),
        protocol.serialize.describe({ type: 'S', name }),
        protocol.serialize.sync(),
      ]),
      { syncToFs: false },
    );
    const paramTypes = parse.parseDescribeStatementResults(messages);
    const rowDescription = messages.find((m) => m.name === 'rowDescription');
    const statement = { name, paramTypes, rowDescription };
    this.prepared.set(text, statement);
    return statement;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
