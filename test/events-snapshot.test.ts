import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSnapshot, visibleIn } from '../src/modules/events/snapshot.js';

/* The opening snapshot of an event stream without Last-Event-ID (src/modules/events/snapshot.ts). */
describe('event stream snapshot', () => {
  it('parses the text form xmin:xmax:xip,... of pg_current_snapshot()', () => {
    assert.deepEqual(parseSnapshot('100:105:100,103'), { xmin: 100n, xmax: 105n, inProgress: new Set([100n, 103n]) });
    assert.deepEqual(parseSnapshot('7:7:'), { xmin: 7n, xmax: 7n, inProgress: new Set() });
    assert.deepEqual(parseSnapshot(' 9007199254740993:9007199254740995: ').xmin, 9007199254740993n);
  });

  it('refuses what is not a snapshot', () => {
    for (const text of ['', '1:2', 'a:b:', '1:2:3:4', '1:2:x'])
      assert.throws(() => parseSnapshot(text), /not a snapshot/);
  });

  it('an xid is visible when it ended before xmin, or is below xmax and was not in progress', () => {
    const s = parseSnapshot('100:105:100,103');
    assert.equal(visibleIn(s, 0n), true, 'events written before the writer id was kept');
    assert.equal(visibleIn(s, 99n), true);
    assert.equal(visibleIn(s, 100n), false, 'in progress at xmin');
    assert.equal(visibleIn(s, 101n), true, 'committed between xmin and xmax');
    assert.equal(visibleIn(s, 103n), false, 'in progress');
    assert.equal(visibleIn(s, 104n), true);
    assert.equal(visibleIn(s, 105n), false, 'started after the snapshot');
    assert.equal(visibleIn(s, 1_000n), false);
  });
});
