import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventCatalogue, eventTypes, isEventType } from '../src/events/index.js';
import { eventTypePattern, normaliseEventTypes } from '../src/modules/webhooks/state.js';

/**
 * The event catalogue (src/events/catalogue.ts) must hold every type the service emits.
 * `EventInput.type` is typed from it, so `npm run typecheck` already refuses an emitter whose
 * type (a literal or a template over a status union) is missing; this scans the source as well,
 * so the rule holds even for a type that reaches `recordEvent` through a cast.
 */

const srcRoot = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The `type:` of every object given to recordEvent, emitCardEvent or postEntries (`event: {...}`) in the source. */
function emittedTypes(): { literals: Set<string>; templatePrefixes: Set<string>; files: number } {
  const literals = new Set<string>();
  const templatePrefixes = new Set<string>();
  let files = 0;
  for (const file of sourceFiles(srcRoot)) {
    if (file.endsWith('event-types.ts')) continue;
    const text = readFileSync(file, 'utf8');
    // Only the objects that become events: recordEvent(trx, {...}), `event: {...}` of a posting and
    // the card area's emitCardEvent(trx, row, {...}).
    const starts = [...text.matchAll(/recordEvent\(\w+, \{|emitCardEvent\(\w+, \w+, \{|event: \{/g)].map(
      (m) => m.index!,
    );
    if (starts.length > 0) files++;
    for (const start of starts) {
      const body = text.slice(start, start + 600);
      const literal = /\btype: '([^']+)'/.exec(body);
      const template = /\btype: `([^`$]*)\$\{/.exec(body);
      if (literal && (!template || literal.index < template.index)) literals.add(literal[1]!);
      else if (template) templatePrefixes.add(template[1]!);
    }
  }
  return { literals, templatePrefixes, files };
}

describe('event catalogue', () => {
  it('holds every event type the source emits (literals, and at least one type for each template)', () => {
    const { literals, templatePrefixes, files } = emittedTypes();
    assert.ok(files >= 10, `found the emitters (${files} files)`);
    assert.ok(literals.has('deposit.credited') && literals.has('earn.order.settled'), 'the scan sees literal types');
    assert.ok(
      templatePrefixes.has('card.topup.') && templatePrefixes.has('withdrawal.'),
      'the scan sees template types',
    );
    for (const type of literals) assert.ok(isEventType(type), `${type} is emitted but missing from eventCatalogue`);
    for (const prefix of templatePrefixes) {
      assert.ok(
        eventTypes.some((t) => t.startsWith(prefix)),
        `types ${prefix}<status> are emitted but none is in eventCatalogue`,
      );
    }
    // The spec's own Events table.
    for (const type of [
      'earn.order.settled',
      'card.topup.credited',
      'qrpay.order.completed',
      'qrpay.order.failed',
      'qrpay.order.refunded',
      'remittance.order.completed',
    ]) {
      assert.ok(isEventType(type), type);
    }
  });

  it('is well formed: every type matches the subscription pattern and names its data.object', () => {
    for (const [type, entry] of Object.entries(eventCatalogue)) {
      assert.match(type, eventTypePattern);
      assert.match(entry.object, /^[a-z_]+$/);
      assert.ok(entry.description.length > 0);
    }
    assert.equal(new Set(eventTypes).size, eventTypes.length);
  });

  it('is what an endpoint may subscribe to: * anywhere, or known types', () => {
    const cases: Array<[string[], ReturnType<typeof normaliseEventTypes>]> = [
      [['deposit.credited', '*'], { ok: true, types: ['*'] }],
      [['deposit.credited', 'deposit.credited'], { ok: true, types: ['deposit.credited'] }],
      [['card.topup.credit'], { ok: false, reason: 'unknown_event_type', entry: 'card.topup.credit' }],
      [['Card.Topup'], { ok: false, reason: 'invalid_event_type', entry: 'Card.Topup' }],
    ];
    for (const [types, normalised] of cases) assert.deepEqual(normaliseEventTypes(types), normalised, String(types));
    assert.deepEqual(normaliseEventTypes(eventTypes), { ok: true, types: eventTypes });
  });
});
