import { Schema } from "effect"
import { canonicalQuery, hostOfTarget, type LogRequest, splitPath } from "../Records.js"

/**
 * What every platform decoder shares (docs/ingestion.md, "Log sources"): the bounds a record must
 * fit, time by magnitude, URL decoding, and the content key of a record without an id. Plain
 * functions over plain values: no Effect, no allocation beyond the record.
 */

export const LOG_FORMATS = ["auto", "vercel", "cloudflare", "fastly", "akamai", "netlify", "cloudfront", "combined"] as const
/** The drain's `format` (docs/ingestion.md, "Log sources"): `auto` or a source of LOG_SOURCES (formats/index.ts). */
export const LogFormatSchema = Schema.Literal(...LOG_FORMATS).annotations({ identifier: "LogFormat" })
export type LogFormat = typeof LogFormatSchema.Type
export const isLogFormat: (s: unknown) => s is LogFormat = Schema.is(LogFormatSchema)

/** A record older than this is garbage (or a clock at zero), not a backfill. */
export const MIN_RECORD_TS = Date.UTC(2000, 0, 1)
/** Clocks drift; a record more than a day ahead of the receive time is garbage. */
export const MAX_AHEAD_MS = 86_400_000
/** A field longer than these makes the record garbage (a 1 MB User-Agent is an attack, not a browser). */
export const MAX_RAW_UA = 8 * 1024
export const MAX_RAW_URL = 16 * 1024
/** A line longer than this is not parsed at all. */
export const MAX_LINE = 256 * 1024

const MAX_UA = 1024
const MAX_FIELD = 1024

export type JsonObject = Record<string, unknown>
export const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

/** Unix seconds, milliseconds, microseconds or nanoseconds, told apart by magnitude. */
export const epochToMs = (n: number): number =>
  n < 1e11 ? n * 1000 : n < 1e14 ? n : n < 1e17 ? n / 1000 : n / 1e6

/** A number, a numeric string (epoch by magnitude) or an RFC 3339 / ISO 8601 string; NaN when none. */
export const timeOf = (v: unknown): number => {
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(epochToMs(v)) : NaN
  if (typeof v !== "string" || v === "") return NaN
  const c = v.charCodeAt(0)
  if (c >= 48 && c <= 57 && /^\d+(\.\d+)?$/.test(v)) return Math.trunc(epochToMs(Number(v)))
  return Date.parse(v)
}

/** An HTTP status from a number or a numeric string; null when absent, a sentinel ("-", -1, 0) or out of range. */
export const statusFrom = (v: unknown): number | null | undefined => {
  const n = typeof v === "number" ? v : typeof v === "string" && v !== "" && v !== "-" ? Number(v) : NaN
  if (Number.isNaN(n)) return typeof v === "string" && v !== "" && v !== "-" ? undefined : null
  if (!Number.isInteger(n) || n <= 0) return null
  // Present but outside 100..599: the record is garbage (docs/ingestion.md).
  return n >= 100 && n <= 599 ? n : undefined
}

/** `%XX` sequences decoded once; the raw text when it is not valid percent-encoding. */
export const urlDecode = (s: string): string => {
  if (s.indexOf("%") === -1) return s
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

export const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "")

/** "-" is how text logs write "nothing". */
export const dash = (s: string): string => (s === "-" ? "" : s)

const clean = (s: string, max: number): string => {
  const cut = s.length > max ? s.slice(0, max) : s
  return cut.includes("\u0000") ? cut.replaceAll("\u0000", "") : cut
}

const COUNTRY = /^[A-Za-z]{2}$/

/** The raw fields of one request as a platform gives them, before the shared rules apply. */
export interface RawRequest {
  readonly id: string
  readonly ts: number
  readonly method: string
  readonly host: string
  /** Path, with or without the query string (or a full URL). */
  readonly url: string
  /** The query, when the platform gives it apart (without "?"); "" otherwise. */
  readonly query: string
  readonly ua: string
  readonly referrer: string
  readonly status: number | null | undefined
  readonly ip: string
  readonly country: string
}

/**
 * The shared rules: a path is required; a time before 2000 or more than a day ahead, a status
 * outside 100..599 or an over-long field make the record garbage (null). Fields are cut to the
 * storage bounds, the host lower-cased, a country kept only as two letters.
 */
export const toRequest = (r: RawRequest, receivedAt: number): LogRequest | null => {
  if (r.url === "" || r.url.length > MAX_RAW_URL || r.query.length > MAX_RAW_URL) return null
  if (r.ua.length > MAX_RAW_UA || r.referrer.length > MAX_RAW_URL || r.host.length > 1024) return null
  if (!(r.ts >= MIN_RECORD_TS && r.ts <= receivedAt + MAX_AHEAD_MS)) return null
  if (r.status === undefined) return null
  const split = splitPath(r.url)
  const method = r.method.trim().toUpperCase()
  const ip = r.ip.trim()
  // An absolute-form target (`GET http://www.acme.com/x`) names the host when the record does not.
  const host = r.host !== "" ? r.host : hostOfTarget(r.url)
  return {
    recordId: r.id === "" ? null : clean(r.id, 200),
    ts: r.ts,
    method: method === "" ? "GET" : clean(method, 16),
    host: clean(host.trim().toLowerCase(), 255),
    path: split.path,
    query: r.query !== "" ? canonicalQuery(r.query.charCodeAt(0) === 63 ? r.query.slice(1) : r.query) : split.query,
    ua: clean(r.ua, MAX_UA),
    referrer: clean(r.referrer, MAX_FIELD),
    status: r.status,
    clientIp: ip === "" ? null : clean(ip, 64),
    country: COUNTRY.test(r.country) ? r.country.toUpperCase() : null
  }
}

/**
 * The key of a record that carries no id of its own: a hash of its text and how many identical
 * texts came before it in the same stream, so the same file or delivery sent again gives the same
 * keys (stored once) while two identical requests in it stay two. The counts are kept for at most
 * `CONTENT_KEY_WINDOW` distinct texts (bounded memory); identical lines further apart than that
 * share a key.
 */
export const CONTENT_KEY_WINDOW = 100_000
export class ContentKeys {
  private seen = new Map<string, number>()
  next(text: string): string {
    const hash = Bun.hash(text).toString(36)
    const n = this.seen.get(hash) ?? 0
    if (this.seen.size >= CONTENT_KEY_WINDOW && n === 0) this.seen = new Map()
    this.seen.set(hash, n + 1)
    return n === 0 ? `c:${hash}` : `c:${hash}:${n}`
  }
}

/** Country names as logs write them that the region names of Intl.DisplayNames do not spell. */
const COUNTRY_ALIASES: Record<string, string> = {
  "united states of america": "US",
  "usa": "US",
  "great britain": "GB",
  "united kingdom of great britain and northern ireland": "GB",
  "russian federation": "RU",
  "korea, republic of": "KR",
  "republic of korea": "KR",
  "korea, democratic people's republic of": "KP",
  "viet nam": "VN",
  "iran, islamic republic of": "IR",
  "taiwan, province of china": "TW",
  "syrian arab republic": "SY",
  "lao people's democratic republic": "LA",
  "moldova, republic of": "MD",
  "tanzania, united republic of": "TZ",
  "venezuela, bolivarian republic of": "VE",
  "bolivia, plurinational state of": "BO",
  "czech republic": "CZ",
  "turkey": "TR",
  "turkiye": "TR",
  "hong kong": "HK",
  "macao": "MO",
  "macau": "MO",
  "palestine, state of": "PS",
  "palestine": "PS",
  "congo, the democratic republic of the": "CD",
  "brunei darussalam": "BN",
  "cape verde": "CV",
  "swaziland": "SZ",
  "macedonia": "MK",
  "myanmar": "MM",
  "burma": "MM",
  "ivory coast": "CI",
  "cote d'ivoire": "CI",
  "côte d'ivoire": "CI",
  "holy see (vatican city state)": "VA",
  "micronesia, federated states of": "FM",
  "virgin islands, british": "VG",
  "virgin islands, u.s.": "VI"
}
/** Two-letter codes Intl names that are not current countries (groupings, withdrawn or reserved codes). */
const NOT_COUNTRIES = new Set(["EU", "EZ", "UN", "QO", "ZZ", "XA", "XB", "SU", "YU", "CS", "AN", "UK", "AC", "CP", "DG", "EA", "IC", "TA"])

let countryNames: Map<string, string> | undefined
/** English country name (any case) -> ISO 3166-1 alpha-2, built once from Intl's region names. */
const countryByName = (): Map<string, string> => {
  if (countryNames !== undefined) return countryNames
  const names = new Map<string, string>(Object.entries(COUNTRY_ALIASES))
  const display = new Intl.DisplayNames(["en"], { type: "region" })
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b)
      // A withdrawn code ("DD", "BU") has a canonical successor: only the successor is kept.
      if (NOT_COUNTRIES.has(code) || Intl.getCanonicalLocales(`und-${code}`)[0] !== `und-${code}`) continue
      const name = display.of(code)
      if (name === undefined || name === code || name === "Unknown Region") continue
      const key = name.toLowerCase().replaceAll("’", "'")
      if (!names.has(key)) names.set(key, code)
    }
  }
  countryNames = names
  return names
}

/**
 * A country as a log gives it: an ISO 3166-1 alpha-2 code as it is, an English country name
 * ("Germany", "united states") as its code; "" for anything else ("**", "--", a region).
 */
export const countryCode = (value: string): string => {
  const v = value.trim()
  if (v.length === 2) return COUNTRY.test(v) ? v : ""
  if (v.length < 4 || v.length > 60) return ""
  return countryByName().get(v.toLowerCase().replaceAll("’", "'")) ?? ""
}
