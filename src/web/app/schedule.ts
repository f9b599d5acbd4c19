import { formatDate } from "./dom.js"

/**
 * When the next scheduled scan is, in words: a date to come, or, once it has passed, that it is due and why it
 * may not have started (the scanner starts a due scan within a minute when the server has answer engines).
 */
export const nextScanText = (nextScanAt: string, nowMs: number, lastScanAt: string | null) => {
  const due = Date.parse(nextScanAt)
  if (Number.isNaN(due) || due > nowMs) return formatDate(nextScanAt)
  const started = lastScanAt !== null && Date.parse(lastScanAt) >= due
  return started
    ? `due since ${formatDate(nextScanAt)}; the last scan ran at ${formatDate(lastScanAt)}`
    : `due since ${formatDate(nextScanAt)}, not started: this server's scanner starts a due scan within a minute once its operator has configured answer engines`
}
