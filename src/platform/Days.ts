/**
 * Calendar days in UTC, the unit of every rollup, range and retention horizon. A day is written
 * `YYYY-MM-DD` (what a SQL `date` column takes and gives back as text); arithmetic runs on epoch
 * milliseconds. Every module that counts days uses these, so "today" means the same thing everywhere.
 */

export const DAY_MS = 86_400_000

/** `YYYY-MM-DD` of the UTC day holding an instant (epoch milliseconds or a Date). */
export const isoDay = (at: number | Date): string => new Date(at).toISOString().slice(0, 10)

/** Epoch milliseconds of the midnight (UTC) that starts a `YYYY-MM-DD` day. */
export const dayMs = (day: string): number => Date.parse(`${day}T00:00:00Z`)

/** Epoch milliseconds of the midnight (UTC) that starts the day of an instant. */
export const startOfDayMs = (at: number): number => at - (at % DAY_MS)

/** The day `n` days after `day` (before it when negative). */
export const addDays = (day: string, n: number): string => isoDay(dayMs(day) + n * DAY_MS)

/** `YYYY-MM-01` of the calendar month (UTC) of an instant: the key of a monthly counter. */
export const monthStart = (at: Date): string => `${at.toISOString().slice(0, 7)}-01`

/** Days of a read: the range [from, to] and the previous period of the same length [prevFrom, from). */
export interface Period {
  readonly prevFrom: string
  readonly from: string
  readonly to: string
}

/** The `days` days ending on the UTC day of `at` (today included), and the `days` before them. */
export const periodOf = (at: Date, days: number): Period => {
  const today = startOfDayMs(at.getTime())
  return { to: isoDay(today), from: isoDay(today - (days - 1) * DAY_MS), prevFrom: isoDay(today - (2 * days - 1) * DAY_MS) }
}

/** `count` consecutive days starting at `from`, oldest first (the x axis of a daily trend). */
export const dayList = (from: string, count: number): Array<string> => {
  const start = dayMs(from)
  return Array.from({ length: count }, (_, i) => isoDay(start + i * DAY_MS))
}
