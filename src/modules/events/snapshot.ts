/**
 * A PostgreSQL snapshot (`pg_current_snapshot()`, text form `xmin:xmax:xip,...`) and whether a
 * transaction's writes were visible in it. A stream opened without Last-Event-ID starts at the
 * horizon (the snapshot's xmin), which any old open transaction of the cluster holds back: it
 * sends only the events its opening snapshot did not see (stream.ts, `startPosition`), never one
 * committed before it opened.
 */
export interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  /** The transactions in progress when it was taken (xmin ≤ xid < xmax). */
  inProgress: ReadonlySet<bigint>;
}

export function parseSnapshot(text: string): Snapshot {
  const match = /^(\d+):(\d+):([\d,]*)$/.exec(text.trim());
  if (!match) throw new Error(`not a snapshot: ${text}`);
  const inProgress = new Set(match[3] ? match[3].split(',').map((x) => BigInt(x)) : []);
  return { xmin: BigInt(match[1]!), xmax: BigInt(match[2]!), inProgress };
}

/** Whether the writes of transaction `xid` were visible in the snapshot (committed before it was taken). */
export function visibleIn(snapshot: Snapshot, xid: bigint): boolean {
  return xid < snapshot.xmin || (xid < snapshot.xmax && !snapshot.inProgress.has(xid));
}
