import type { LogRequest } from "../Records.js"
import { dash, type JsonObject, statusFrom, str, timeOf, toRequest, urlDecode } from "./common.js"

/**
 * Amazon CloudFront standard access logs (docs.aws.amazon.com/AmazonCloudFront/latest/
 * DeveloperGuide/standard-logs-reference.html): W3C extended, tab-separated, `#Version` and
 * `#Fields` header lines, one file per period, gzip. Fields are found by the `#Fields` header when
 * there is one, else in the documented default order. cs(User-Agent) and cs(Referer) are
 * URL-encoded: decoded once; cs-uri-stem and cs-uri-query are kept as logged, in the canonical
 * form every source gives them (Records.ts canonicalPath). x-host-header (the name the viewer asked for) is
 * preferred over cs(Host) (the distribution's domain).
 */
export const CLOUDFRONT_DEFAULT_FIELDS = [
  "date", "time", "x-edge-location", "sc-bytes", "c-ip", "cs-method", "cs(Host)", "cs-uri-stem", "sc-status",
  "cs(Referer)", "cs(User-Agent)", "cs-uri-query", "cs(Cookie)", "x-edge-result-type", "x-edge-request-id",
  "x-host-header", "cs-protocol", "cs-bytes", "time-taken", "x-forwarded-for", "ssl-protocol", "ssl-cipher",
  "x-edge-response-result-type", "cs-protocol-version", "fle-status", "fle-encrypted-fields", "c-port",
  "time-to-first-byte", "x-edge-detailed-result-type", "sc-content-type", "sc-content-len", "sc-range-start",
  "sc-range-end"
] as const

export interface CloudFrontColumns {
  readonly date: number
  readonly time: number
  readonly ip: number
  readonly method: number
  readonly csHost: number
  readonly hostHeader: number
  readonly stem: number
  readonly status: number
  readonly referrer: number
  readonly ua: number
  readonly query: number
  readonly id: number
  readonly country: number
  readonly count: number
}

export const cloudFrontColumns = (names: ReadonlyArray<string>): CloudFrontColumns => {
  const at = (name: string) => names.indexOf(name)
  return {
    date: at("date"),
    time: at("time"),
    ip: at("c-ip"),
    method: at("cs-method"),
    csHost: at("cs(Host)"),
    hostHeader: at("x-host-header"),
    stem: at("cs-uri-stem"),
    status: at("sc-status"),
    referrer: at("cs(Referer)"),
    ua: at("cs(User-Agent)"),
    query: at("cs-uri-query"),
    id: at("x-edge-request-id"),
    country: at("c-country"),
    count: names.length
  }
}

export const DEFAULT_COLUMNS = cloudFrontColumns(CLOUDFRONT_DEFAULT_FIELDS)

/** `#Fields: date time ...` -> the columns; null when the line is not a usable header. */
export const fieldsHeader = (line: string): CloudFrontColumns | null => {
  if (!line.startsWith("#Fields:")) return null
  const names = line.slice(8).trim().split(/\s+/)
  const columns = cloudFrontColumns(names)
  return columns.date === -1 || columns.time === -1 || columns.stem === -1 ? null : columns
}

const DATE = /^\d{4}-\d{2}-\d{2}$/

/** A data line of a standard log without a header seen: tab-separated, starting with a date. */
export const looksCloudFront = (line: string): boolean => {
  const tab = line.indexOf("\t")
  return tab === 10 && DATE.test(line.slice(0, 10))
}

export const fromCloudFrontLine = (
  line: string,
  columns: CloudFrontColumns,
  receivedAt: number
): { parsed: boolean; request: LogRequest | null } => {
  const f = line.split("\t")
  if (f.length < 9 || f.length > columns.count + 8 || !DATE.test(f[columns.date] ?? "")) return { parsed: false, request: null }
  const get = (i: number) => (i === -1 ? "" : dash(f[i] ?? ""))
  const host = get(columns.hostHeader) || get(columns.csHost)
  const request = toRequest({
    id: get(columns.id),
    ts: Date.parse(`${get(columns.date)}T${get(columns.time)}Z`),
    method: get(columns.method),
    host,
    url: get(columns.stem),
    query: get(columns.query),
    ua: urlDecode(get(columns.ua)),
    referrer: urlDecode(get(columns.referrer)),
    status: statusFrom(get(columns.status)),
    ip: get(columns.ip),
    country: get(columns.country)
  }, receivedAt)
  return { parsed: true, request }
}

/**
 * CloudFront standard logging v2 with the JSON output format: one object a record, keyed by the
 * W3C field names of the text format (`c-ip`, `cs-uri-stem`, ...), values as the text format
 * writes them (`-` for none, User-Agent and referrer URL-encoded). The time is `date` + `time`,
 * else v2's `timestamp(ms)` or `timestamp` (Unix time, by magnitude).
 */
export const isCloudFrontJson = (r: JsonObject): boolean => "cs-uri-stem" in r || "x-edge-request-id" in r || "c-ip" in r

const field = (r: JsonObject, name: string): string => dash(str(r[name]))

export const fromCloudFrontJson = (r: JsonObject, receivedAt: number): LogRequest | null => {
  const date = field(r, "date")
  const time = field(r, "time")
  const ts = date !== "" && time !== "" ? Date.parse(`${date}T${time}Z`) : timeOf(r["timestamp(ms)"] ?? r["timestamp"])
  return toRequest({
    id: field(r, "x-edge-request-id"),
    ts,
    method: field(r, "cs-method"),
    host: field(r, "x-host-header") || field(r, "cs(Host)"),
    url: field(r, "cs-uri-stem"),
    query: field(r, "cs-uri-query"),
    ua: urlDecode(field(r, "cs(User-Agent)")),
    referrer: urlDecode(field(r, "cs(Referer)")),
    status: statusFrom(r["sc-status"]),
    ip: field(r, "c-ip"),
    country: field(r, "c-country")
  }, receivedAt)
}
