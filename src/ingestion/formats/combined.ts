import type { LogRequest } from "../Records.js"
import { dash, statusFrom, toRequest } from "./common.js"

/**
 * nginx `combined` / Apache "Combined Log Format" (httpd.apache.org/docs/current/logs.html,
 * nginx.org/en/docs/http/ngx_http_log_module.html#log_format):
 * `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`.
 * No host (unless the request line is in absolute form) and no request id: the key is the line's
 * content (ContentKeys).
 *
 * The line is read by a scanner, not a regular expression: each character is looked at a bounded
 * number of times, so the cost is linear in the line whatever it holds (an unclosed quote of
 * 250,000 characters included; a backtracking pattern was superlinear on such lines).
 */

/** End of the run of non-space characters at `from` (`from` itself when there is none). */
const tokenEnd = (s: string, from: number): number => {
  let i = from
  while (i < s.length && s.charCodeAt(i) > 32) i++
  return i
}

/** The index of the closing quote of a quoted field whose content starts at `from`; -1 when unclosed. */
const quoteEnd = (s: string, from: number): number => {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 34 /* " */) return i
    if (c === 92 /* \ */) i++
  }
  return -1
}

/** The fields of one line, as offsets; null when the line is not of the format. */
interface Fields {
  readonly ip: string
  readonly time: string
  readonly request: string
  readonly status: string
  readonly referrer: string | undefined
  readonly ua: string | undefined
}

const scan = (line: string): Fields | null => {
  // $remote_addr, the identity and $remote_user: three runs of non-space characters.
  const ipEnd = tokenEnd(line, 0)
  if (ipEnd === 0 || line.charCodeAt(ipEnd) !== 32) return null
  const identEnd = tokenEnd(line, ipEnd + 1)
  if (identEnd === ipEnd + 1 || line.charCodeAt(identEnd) !== 32) return null
  const userEnd = tokenEnd(line, identEnd + 1)
  if (userEnd === identEnd + 1 || line.charCodeAt(userEnd) !== 32 || line.charCodeAt(userEnd + 1) !== 91 /* [ */) return null
  // [$time_local]: 20 to 40 characters without "]".
  const timeStart = userEnd + 2
  const timeEnd = line.indexOf("]", timeStart)
  if (timeEnd - timeStart < 20 || timeEnd - timeStart > 40) return null
  if (line.charCodeAt(timeEnd + 1) !== 32 || line.charCodeAt(timeEnd + 2) !== 34) return null
  const requestEnd = quoteEnd(line, timeEnd + 3)
  if (requestEnd === -1 || line.charCodeAt(requestEnd + 1) !== 32) return null
  const statusEnd = tokenEnd(line, requestEnd + 2)
  if (statusEnd === requestEnd + 2 || line.charCodeAt(statusEnd) !== 32) return null
  const bytesEnd = tokenEnd(line, statusEnd + 1)
  if (bytesEnd === statusEnd + 1) return null
  // Then, optionally (the common log format stops here), "$http_referer" "$http_user_agent".
  let referrer: string | undefined
  let ua: string | undefined
  if (line.charCodeAt(bytesEnd) === 32 && line.charCodeAt(bytesEnd + 1) === 34) {
    const refEnd = quoteEnd(line, bytesEnd + 2)
    if (refEnd !== -1 && line.charCodeAt(refEnd + 1) === 32 && line.charCodeAt(refEnd + 2) === 34) {
      const uaEnd = quoteEnd(line, refEnd + 3)
      if (uaEnd !== -1) {
        referrer = line.slice(bytesEnd + 2, refEnd)
        ua = line.slice(refEnd + 3, uaEnd)
      }
    }
  }
  return {
    ip: line.slice(0, ipEnd),
    time: line.slice(timeStart, timeEnd),
    request: line.slice(timeEnd + 3, requestEnd),
    status: line.slice(requestEnd + 2, statusEnd),
    referrer,
    ua
  }
}

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

const utf8 = new TextDecoder("utf-8")
const utf8Encoder = new TextEncoder()

/**
 * A quoted field as the servers escape it, decoded: nginx writes `"`, `\`, control bytes and
 * bytes of 0x7F and up as `\xHH` (a UTF-8 User-Agent arrives as its bytes); Apache writes `\"`,
 * `\\` and `\xhh`. The bytes are read back as UTF-8. Any other backslash stays as it is. The
 * field itself when it holds no backslash (the usual case: no allocation).
 */
export const unescapeLogField = (s: string): string => {
  if (s.indexOf("\\") === -1) return s
  const bytes: Array<number> = []
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 92 && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1)
      if (next === 34 || next === 92) {
        bytes.push(next)
        i++
        continue
      }
      if (next === 120 /* x */ && i + 3 < s.length) {
        const hi = hexDigit(s.charCodeAt(i + 2))
        const lo = hexDigit(s.charCodeAt(i + 3))
        if (hi !== -1 && lo !== -1) {
          bytes.push(hi * 16 + lo)
          i += 3
          continue
        }
      }
    }
    if (c < 128) {
      bytes.push(c)
    } else {
      const cp = s.codePointAt(i)!
      for (const b of utf8Encoder.encode(String.fromCodePoint(cp))) bytes.push(b)
      if (cp > 0xffff) i++
    }
  }
  return utf8.decode(Uint8Array.from(bytes))
}

const hexDigit = (c: number): number =>
  c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1

/**
 * One line: the request, or null when the line is not of the format ("nothing parsed") or is
 * garbage (an unreadable time or request line). `parsed` tells the two apart for the counts.
 */
export const fromCombinedLine = (line: string, receivedAt: number): { parsed: boolean; request: LogRequest | null } => {
  const m = scan(line)
  if (m === null) return { parsed: false, request: null }
  const requestLine = unescapeLogField(m.request)
  const sp1 = requestLine.indexOf(" ")
  if (sp1 <= 0) return { parsed: true, request: null }
  const sp2 = requestLine.indexOf(" ", sp1 + 1)
  const target = sp2 === -1 ? requestLine.slice(sp1 + 1) : requestLine.slice(sp1 + 1, sp2)
  const request = toRequest({
    id: "",
    ts: clfTime(m.time),
    method: requestLine.slice(0, sp1),
    host: "",
    url: target,
    query: "",
    ua: dash(unescapeLogField(m.ua ?? "")),
    referrer: dash(unescapeLogField(m.referrer ?? "")),
    status: statusFrom(m.status),
    ip: dash(m.ip),
    country: ""
  }, receivedAt)
  return { parsed: true, request }
}
