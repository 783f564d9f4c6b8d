import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DurationError, formatDuration, parseDuration } from '../src/duration.js';

test('parseDuration: units d, h, m, s, largest first, or plain seconds', () => {
  const cases: [string, number][] = [
    ['90s', 90],
    ['3d', 259_200],
    ['1h30m', 5_400],
    ['2d12h', 216_000],
    ['1d2h3m4s', 93_784],
    ['45m', 2_700],
    ['3600', 3_600],
    ['1', 1],
    [' 1H ', 3_600],
    ['90m', 5_400],
    ['0h5m', 300],
    ['365d', 31_536_000],
  ];
  for (const [text, seconds] of cases) assert.equal(parseDuration(text), seconds, text);
});

test('parseDuration: anything else is a DurationError, never a number', () => {
  for (const text of [
    '',
    ' ',
    'h',
    '1x',
    '1.5h',
    '-5s',
    '+5s',
    '0s',
    '0',
    '0h0m',
    '30m1h',
    '1h1h',
    '1 h',
    '1h 30m',
    'h1',
    '1hh',
    '5sm',
    '1e3',
    '0x10',
    '9'.repeat(30) + 'd',
  ]) {
    assert.throws(() => parseDuration(text), DurationError, JSON.stringify(text));
  }
});

test('formatDuration is its inverse for display', () => {
  for (const s of [1, 59, 60, 90, 3_600, 5_400, 86_400, 93_784, 31_536_000])
    assert.equal(parseDuration(formatDuration(s)), s);
  assert.equal(formatDuration(5_400), '1h30m');
  assert.equal(formatDuration(0), '0s');
});
