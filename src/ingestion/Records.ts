/**
 * The one shape every ingestion path produces (a served HTTP request), and the pure rules
 * that turn a server-log record into it (docs/ingestion.md; each log source's decoder, formats/, uses them too).
 * Nothing here throws: any input gives a request or null.
 */
import { isRecord } from "../platform/Guards.js"

export interface LogRequest {
  /** The platform's id of the record (drain), used as its delivery key; null when none. */
  readonly recordId: string | null
  /** Unix milliseconds. */
  readonly ts: number
  readonly method: string
  readonly host: string
  /** Path without the query string. */
  readonly path: string
  /** Query string without the leading "?", "" when none. */
  readonly query: string
  readonly ua: string
  readonly referrer: string
  readonly status: number | null
  readonly clientIp: string | null
  readonly country: string | null
  /** Web Bot Auth headers of the request, when the record carries them (docs/verification.md). */
  readonly signature?: string | null
  readonly signatureInput?: string | null
  readonly signatureAgent?: string | null
}

export const BATCH_CHANNELS = ["edge_worker", "cdn_webhook", "csv_upload", "api"] as const
export type BatchChannel = (typeof BATCH_CHANNELS)[number]
export const isBatchChannel = (s: string): s is BatchChannel => (BATCH_CHANNELS as ReadonlyArray<string>).includes(s)

const MAX_PATH = 2048
const MAX_QUERY = 2048
export const MAX_FIELD = 1024
export const MAX_UA = 1024
const MAX_RECORD_ID = 200
/** 0001-01-01 .. 9999-12-31 would fit PostgreSQL; a request log older than 1990 or past 2100 is garbage. */
const MIN_TS = 631152000000 // 1990-01-01
const MAX_TS = 4102444800000 // 2100-01-01

/** PostgreSQL text cannot hold NUL; a bounded length keeps one record from bloating a row. */
export const clean = (s: string, max: number): string => {
  const cut = s.length > max ? s.slice(0, max) : s
  return cut.includes("\u0000") ? cut.replaceAll("\u0000", "") : cut
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)

// ---------------------------------------------------------------------------
// One canonical form of a path and a query (docs/ingestion.md, "One page, one path")
// ---------------------------------------------------------------------------

/** 1 for the ASCII characters a path carries unescaped: RFC 3986 pchar (unreserved, sub-delims, ":", "@") and "/". */
const PATH_CHARS = new Uint8Array(128)
/** The same for a query, which may also carry "?" (and "/"). */
const QUERY_CHARS = new Uint8Array(128)
/** 1 for RFC 3986 unreserved characters: an escape of one of them is decoded. */
const UNRESERVED = new Uint8Array(128)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") UNRESERVED[c.charCodeAt(0)] = 1
for (let c = 0; c < 128; c++) {
  const ok = UNRESERVED[c] === 1 || "!$&'()*+,;=:@/%".includes(String.fromCharCode(c))
  PATH_CHARS[c] = ok ? 1 : 0
  QUERY_CHARS[c] = ok || c === 0x3f ? 1 : 0
}
const HEX = "0123456789ABCDEF"
const hexValue = (c: number): number =>
  c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1
const escapeByte = (b: number) => "%" + HEX[b >> 4]! + HEX[b & 15]!

/** The UTF-8 escapes of one code point (a lone surrogate is U+FFFD, as a URL parser writes it). */
const escapeCodePoint = (cp: number): string => {
  if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd
  if (cp < 0x800) return escapeByte(0xc0 | (cp >> 6)) + escapeByte(0x80 | (cp & 63))
  if (cp < 0x10000) return escapeByte(0xe0 | (cp >> 12)) + escapeByte(0x80 | ((cp >> 6) & 63)) + escapeByte(0x80 | (cp & 63))
  return escapeByte(0xf0 | (cp >> 18)) + escapeByte(0x80 | ((cp >> 12) & 63)) + escapeByte(0x80 | ((cp >> 6) & 63)) +
    escapeByte(0x80 | (cp & 63))
}

/**
 * Percent-encoding normalised (RFC 3986 6.2.2): escapes of unreserved characters decoded, other
 * escapes kept with upper-case hex, characters that must be escaped (space, `"`, `<`, a `%` that
 * starts no escape, control and non-ASCII characters as UTF-8) escaped. One pass; the input itself
 * when it is already canonical (the usual case: no allocation).
 */
const canonicalEscapes = (s: string, allowed: Uint8Array): string => {
  const n = s.length
  let i = 0
  // The canonical prefix, which most paths are whole.
  for (; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c >= 128 || allowed[c] === 0) break
    if (c === 37) {
      const h = s.charCodeAt(i + 1)
      const l = s.charCodeAt(i + 2)
      const hi = hexValue(h)
      const lo = hexValue(l)
      if (hi < 0 || lo < 0 || h >= 97 || l >= 97 || UNRESERVED[hi * 16 + lo] === 1) break
      i += 2
    }
  }
  if (i === n) return s
  let out = s.slice(0, i)
  let from = i
  for (; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c < 128 && allowed[c] === 1 && c !== 37) continue
    let piece: string
    let width = 1
    if (c === 37) {
      const hi = hexValue(s.charCodeAt(i + 1))
      const lo = hexValue(s.charCodeAt(i + 2))
      if (hi < 0 || lo < 0) {
        piece = "%25"
      } else {
        const b = hi * 16 + lo
        piece = UNRESERVED[b] === 1 ? String.fromCharCode(b) : escapeByte(b)
        width = 3
      }
    } else if (c < 128) {
      piece = escapeByte(c)
    } else {
      const cp = s.codePointAt(i)!
      piece = escapeCodePoint(cp)
      width = cp > 0xffff ? 2 : 1
    }
    out += s.slice(from, i) + piece
    i += width - 1
    from = i + 1
  }
  return out + s.slice(from)
}

/** Cut to `max` characters, never inside an escape. */
const cutEscaped = (s: string, max: number): string => {
  if (s.length <= max) return s
  let end = max
  if (s.charCodeAt(end - 1) === 37) end -= 1
  else if (s.charCodeAt(end - 2) === 37) end -= 2
  return s.slice(0, end)
}

/** The stored form of a path: canonical escapes, a leading "/", at most 2,048 characters. */
export const canonicalPath = (raw: string): string => {
  const path = canonicalEscapes(raw, PATH_CHARS)
  return cutEscaped(path.charCodeAt(0) === 47 ? path : "/" + path, MAX_PATH)
}

/**
 * A piece of a path in its stored form (the canonical escapes, no leading "/"): what a search of the
 * stored paths looks for, so that "café" finds "/caf%C3%A9".
 */
export const canonicalPathPart = (raw: string): string => canonicalEscapes(raw, PATH_CHARS)

/** The stored form of a query (without "?"): canonical escapes, at most 2,048 characters. */
export const canonicalQuery = (raw: string): string => cutEscaped(canonicalEscapes(raw, QUERY_CHARS), MAX_QUERY)

const ABSOLUTE = /^[a-z][a-z0-9+.-]*:\/\//i

/** The host of an absolute-form target ("http://user@www.acme.com/x" -> "www.acme.com"); "" otherwise. */
export const hostOfTarget = (raw: string): string => {
  if (!ABSOLUTE.test(raw)) return ""
  const start = raw.indexOf("//") + 2
  let end = start
  while (end < raw.length) {
    const c = raw.charCodeAt(end)
    if (c === 47 || c === 63 || c === 35) break
    end++
  }
  const authority = raw.slice(start, end)
  return authority.slice(authority.lastIndexOf("@") + 1)
}

/**
 * "/a/b?x=1#f", "https://h/a?x" or "a/b" -> ["/a/b", "x=1"], each in its canonical form
 * (canonicalPath, canonicalQuery). Never fails.
 */
export const splitPath = (raw: string): { readonly path: string; readonly query: string } => {
  let s = raw.trim()
  if (ABSOLUTE.test(s)) {
    // A full URL: keep what follows the authority.
    const start = s.indexOf("/", s.indexOf("//") + 2)
    s = start === -1 ? "/" : s.slice(start)
  }
  const hash = s.indexOf("#")
  if (hash !== -1) s = s.slice(0, hash)
  const q = s.indexOf("?")
  const path = q === -1 ? s : s.slice(0, q)
  const query = q === -1 ? "" : s.slice(q + 1)
  return { path: canonicalPath(path), query: canonicalQuery(query) }
}

/** An HTTP status worth storing: 100..599; anything else (the drain's -1 sentinel included) is no status. */
export const statusOf = (v: unknown): number | null =>
  typeof v === "number" && Number.isInteger(v) && v >= 100 && v <= 599 ? v : null

const COUNTRY = /^[A-Za-z]{2}$/
const countryOf = (v: unknown): string | null => (typeof v === "string" && COUNTRY.test(v) ? v.toUpperCase() : null)

export const methodOf = (v: unknown): string => {
  const m = typeof v === "string" ? v.trim().toUpperCase() : ""
  return m === "" ? "GET" : clean(m, 16)
}

export const ipOf = (v: unknown): string | null => {
  const s = typeof v === "string" ? v.trim() : ""
  return s === "" ? null : clean(s, 64)
}

export const validTs = (ms: number) => Number.isFinite(ms) && ms >= MIN_TS && ms <= MAX_TS

/** docs/decisions.md: ts below 100000000000 is Unix seconds, else Unix milliseconds. */
export const batchTsToMs = (ts: number): number => (ts < 100_000_000_000 ? ts * 1000 : ts)

const optionalType = (record: Record<string, unknown>, key: string, type: "string" | "number") => {
  const v = record[key]
  return v === undefined || v === null || typeof v === type
}

/**
 * One record of a batch (docs/ingestion.md, docs/decisions.md): `ua` and `path` are required non-empty strings;
 * the other fields, when present, must have their type. A record failing this is skipped, not the batch.
 * A `ts` outside 1990..2100 is refused the same way.
 */
export const fromBatchRecord = (record: unknown, receivedAt: number): LogRequest | null => {
  if (!isRecord(record)) return null
  const ua = record.ua
  const path = record.path
  if (typeof ua !== "string" || ua.trim() === "" || typeof path !== "string" || path.trim() === "") return null
  if (
    !optionalType(record, "ref", "string") || !optionalType(record, "ip", "string") ||
    !optionalType(record, "method", "string") || !optionalType(record, "country", "string") ||
    !optionalType(record, "ts", "number") || !optionalType(record, "status", "number") ||
    !optionalType(record, "id", "string") || !optionalType(record, "host", "string")
  ) return null
  // The record's own key (docs/ingestion.md): a batch sent again stores nothing twice.
  const id = typeof record.id === "string" ? record.id : ""
  if (id.length > MAX_RECORD_ID) return null
  let ts = receivedAt
  if (typeof record.ts === "number") {
    if (!Number.isInteger(record.ts)) return null
    ts = batchTsToMs(record.ts)
    if (!validTs(ts)) return null
  }
  if (typeof record.status === "number" && !Number.isInteger(record.status)) return null
  const { path: p, query } = splitPath(path)
  return {
    recordId: id === "" ? null : clean(id, MAX_RECORD_ID),
    ts,
    method: methodOf(record.method),
    host: clean((str(record.host) ?? "").trim().toLowerCase(), 255),
    path: p,
    query,
    ua: clean(ua, MAX_UA),
    referrer: clean(str(record.ref) ?? "", MAX_FIELD),
    status: statusOf(record.status),
    clientIp: ipOf(record.ip),
    country: countryOf(record.country),
    signature: typeof record.signature === "string" ? clean(record.signature, MAX_FIELD * 4) : null,
    signatureInput: typeof record.signature_input === "string" ? clean(record.signature_input, MAX_FIELD) : null,
    signatureAgent: typeof record.signature_agent === "string" ? clean(record.signature_agent, MAX_FIELD) : null
  }
}

// ---------------------------------------------------------------------------
// AI referrals (docs/agents.md)
// ---------------------------------------------------------------------------

/** Referrer hosts of answer engines (the host or any subdomain of it) and the engine slug each means. */
export const REFERRER_ENGINES: ReadonlyArray<readonly [string, string]> = [
  ["chatgpt.com", "chatgpt"],
  ["chat.openai.com", "chatgpt"],
  ["perplexity.ai", "perplexity"],
  ["gemini.google.com", "gemini"],
  ["bard.google.com", "gemini"],
  ["copilot.microsoft.com", "copilot"],
  ["claude.ai", "claude"],
  ["grok.com", "grok"],
  ["chat.deepseek.com", "deepseek"]
]

const HOST_OF = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#:]+)/i

/** The engine slug of a referrer URL, or null when it is not an answer engine (or not a URL). */
export const referrerEngine = (referrer: string): string | null => {
  if (referrer === "") return null
  const m = HOST_OF.exec(referrer)
  if (m === null) return null
  const host = m[1]!.toLowerCase().replace(/\.$/, "")
  for (const [domain, engine] of REFERRER_ENGINES) {
    if (host === domain || (host.length > domain.length && host.endsWith(domain) && host[host.length - domain.length - 1] === ".")) {
      return engine
    }
  }
  return null
}
