/**
 * The simulated remittance provider's settlement calendar (pure): which days a currency settles
 * on. Weekends never; public holidays of the currency's settlement system: TARGET2 for EUR, the
 * Bank of England for GBP, the Federal Reserve for USD (observed days included), New Year and
 * Christmas for the others. The provider answers from it; the service forwards what it answers.
 */

const day = (y: number, m: number, d: number) => new Date(Date.UTC(y, m - 1, d));
export const isoDate = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

/** Easter Sunday (Gregorian; the anonymous algorithm of Meeus/Jones/Butcher). */
export function easterSunday(year: number): Date {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const dayOfMonth = ((h + l - 7 * m + 114) % 31) + 1;
  return day(year, month, dayOfMonth);
}

/** The n-th (1-based) weekday (0 = Sunday) of a month; n = -1 is the last one. */
function nthWeekday(year: number, month: number, weekday: number, n: number): Date {
  if (n > 0) {
    const first = day(year, month, 1);
    const offset = (weekday - first.getUTCDay() + 7) % 7;
    return addDays(first, offset + (n - 1) * 7);
  }
  const last = day(year, month + 1, 0);
  const back = (last.getUTCDay() - weekday + 7) % 7;
  return addDays(last, -back);
}

/** A fixed-date holiday falling on a weekend is observed on the next Monday (UK rule). */
function ukObserved(d: Date): Date {
  const w = d.getUTCDay();
  return w === 6 ? addDays(d, 2) : w === 0 ? addDays(d, 1) : d;
}

/** Federal Reserve: a Sunday holiday is observed on Monday; a Saturday one is not moved. */
function fedObserved(d: Date): Date {
  return d.getUTCDay() === 0 ? addDays(d, 1) : d;
}

function holidaysOf(currency: string, year: number): Date[] {
  const easter = easterSunday(year);
  switch (currency) {
    case 'EUR':
      return [
        day(year, 1, 1),
        addDays(easter, -2),
        addDays(easter, 1),
        day(year, 5, 1),
        day(year, 12, 25),
        day(year, 12, 26),
      ];
    case 'GBP': {
      const xmas = day(year, 12, 25);
      const boxing = day(year, 12, 26);
      // Christmas on a Saturday: Monday and Tuesday; on a Sunday: Boxing Day Monday, Christmas Tuesday.
      const xmasDays =
        xmas.getUTCDay() === 6
          ? [addDays(xmas, 2), addDays(xmas, 3)]
          : xmas.getUTCDay() === 0
            ? [addDays(xmas, 1), addDays(xmas, 2)]
            : [xmas, ukObserved(boxing)];
      return [
        ukObserved(day(year, 1, 1)),
        addDays(easter, -2),
        addDays(easter, 1),
        nthWeekday(year, 5, 1, 1),
        nthWeekday(year, 5, 1, -1),
        nthWeekday(year, 8, 1, -1),
        ...xmasDays,
      ];
    }
    case 'USD':
      return [
        fedObserved(day(year, 1, 1)),
        nthWeekday(year, 1, 1, 3),
        nthWeekday(year, 2, 1, 3),
        nthWeekday(year, 5, 1, -1),
        fedObserved(day(year, 6, 19)),
        fedObserved(day(year, 7, 4)),
        nthWeekday(year, 9, 1, 1),
        nthWeekday(year, 10, 1, 2),
        fedObserved(day(year, 11, 11)),
        nthWeekday(year, 11, 4, 4),
        fedObserved(day(year, 12, 25)),
      ];
    default:
      return [day(year, 1, 1), day(year, 12, 25)];
  }
}

/** Holidays by currency and year, as YYYY-MM-DD: a payout's dates ask for the same few years on every call. */
const holidaySets = new Map<string, Set<string>>();

/** Whether `date` (YYYY-MM-DD) is a public holiday of the currency's settlement system. */
export function isHoliday(currency: string, date: string): boolean {
  const key = `${currency}|${date.slice(0, 4)}`;
  let holidays = holidaySets.get(key);
  if (!holidays) {
    holidays = new Set(holidaysOf(currency, Number(date.slice(0, 4))).map(isoDate));
    // Bounded: currencies × years asked; a handful in practice, cleared if something asks for many.
    if (holidaySets.size >= 1_000) holidaySets.clear();
    holidaySets.set(key, holidays);
  }
  return holidays.has(date);
}

/** Whether the currency settles on `date` (YYYY-MM-DD): a weekday that is not a holiday. */
export function isSettlementDay(currency: string, date: string): boolean {
  const w = new Date(`${date}T00:00:00Z`).getUTCDay();
  return w !== 0 && w !== 6 && !isHoliday(currency, date);
}

/** Calendar days from `from`'s UTC date on, as YYYY-MM-DD (bounded: at most 60). */
export function daysFrom(from: Date, count: number): string[] {
  const start = day(from.getUTCFullYear(), from.getUTCMonth() + 1, from.getUTCDate());
  return Array.from({ length: Math.min(Math.max(0, count), 60) }, (_, i) => isoDate(addDays(start, i)));
}

/** The next weekday (UTC) after `from`, as YYYY-MM-DD. */
export function nextBusinessDay(from: Date): string {
  for (const d of daysFrom(from, 8).slice(1)) {
    const w = new Date(`${d}T00:00:00Z`).getUTCDay();
    if (w !== 0 && w !== 6) return d;
  }
  throw new Error('unreachable: a week has weekdays');
}
