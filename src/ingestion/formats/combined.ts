import type { LogRequest } from "../Records.js"
import { dash, statusFrom, toRequest } from "./common.js"

/**
 * nginx `combined` / Apache "Combined Log Format" (httpd.apache.org/docs/current/logs.html,
 * nginx.org/en/docs/http/ngx_http_log_module.html#log_format):
 * `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`.
 * No host and no request id: the key is the line's content (ContentKeys).
 */
const LINE = /^(\S+) \S+ \S+ \[([^\]]{20,40})\] "((?:[^"\\]|\\.)*)" (\S+) \S+(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)")?/

const MONTHS: Record<string, number> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 }

const digits = (s: string, from: number, n: number): number => {
  let v = 0
  for (let i = from; i < from + n; i++) {
    const c = s.charCodeAt(i) - 48
    if (c < 0 || c > 9) return NaN
    v = v * 10 + c
  }
  return v
}

/** "10/Oct/2026:13:55:36 -0700" -> Unix milliseconds; NaN when it is not that shape. */
export const clfTime = (s: string): number => {
  if (s.length < 26 || s.charCodeAt(2) !== 47 || s.charCodeAt(6) !== 47 || s.charCodeAt(11) !== 58) return NaN
  const month = MONTHS[s.slice(3, 6)]
  if (month === undefined) return NaN
  const day = digits(s, 0, 2)
  const year = digits(s, 7, 4)
  const h = digits(s, 12, 2)
  const m = digits(s, 15, 2)
  const sec = digits(s, 18, 2)
  const sign = s.charCodeAt(21) === 45 ? -1 : 1
  const tz = digits(s, 22, 2) * 60 + digits(s, 24, 2)
  const ms = Date.UTC(year, month, day, h, m, sec) - sign * tz * 60_000
  return Number.isNaN(ms) || day < 1 || day > 31 || h > 23 || m > 59 || sec > 60 ? NaN : ms
}

/** `\"` and `\\` as nginx and Apache escape them. */
const unescape = (s: string): string => (s.indexOf("\\") === -1 ? s : s.replace(/\\(["\\])/g, "$1"))

/** True when the line has the shape of a combined (or common) log line, whatever its values. */
export const looksCombined = (line: string): boolean => LINE.test(line)

/**
 * One line: the request, or null when the line is not of the format ("nothing parsed") or is
 * garbage (an unreadable time or request line). `parsed` tells the two apart for the counts.
 */
export const fromCombinedLine = (line: string, receivedAt: number): { parsed: boolean; request: LogRequest | null } => {
  const m = LINE.exec(line)
  if (m === null) return { parsed: false, request: null }
  const requestLine = unescape(m[3]!)
  const sp1 = requestLine.indexOf(" ")
  if (sp1 <= 0) return { parsed: true, request: null }
  const sp2 = requestLine.indexOf(" ", sp1 + 1)
  const target = sp2 === -1 ? requestLine.slice(sp1 + 1) : requestLine.slice(sp1 + 1, sp2)
  const request = toRequest({
    id: "",
    ts: clfTime(m[2]!),
    method: requestLine.slice(0, sp1),
    host: "",
    url: target,
    query: "",
    ua: dash(unescape(m[6] ?? "")),
    referrer: dash(unescape(m[5] ?? "")),
    status: statusFrom(m[4]),
    ip: dash(m[1]!),
    country: ""
  }, receivedAt)
  return { parsed: true, request }
}
