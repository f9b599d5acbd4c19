import { gzip, UA } from "./fixtures.js"

/**
 * Deliveries in each log source's documented shape (docs/ingestion.md, "Log sources"): field
 * names as each platform's documentation gives them. Every delivery holds the same five records:
 * a GPTBot hit with a query and a country, a ClaudeBot hit without a status (the platform's
 * sentinel), a browser, a malformed record, and a GPTBot hit with an absurd time (year 1970).
 */
export const DAY_MS = 86_400_000
/** Two days ago, 10:00 UTC: a backfill that must land on its own day. */
export const recordTime = () => {
  const d = new Date(Date.now() - 2 * DAY_MS)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), 10, 0, 0)
}
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

export interface SourceRecord {
  readonly id: string
  readonly ts: number
  readonly ua: string
  readonly path: string
  readonly query: string
  /** null: the platform's "no status". */
  readonly status: number | null
  readonly ip: string
  readonly country: string
  readonly host: string
  readonly referrer: string
}

export const FORMATS = ["cloudflare", "fastly", "akamai", "netlify", "cloudfront", "combined"] as const
export type SourceFormat = (typeof FORMATS)[number]

let seq = 0
export const sourceRecords = (format: string, ts = recordTime()): ReadonlyArray<SourceRecord> => {
  const n = ++seq
  const base = { host: "www.acme.com", referrer: "", country: "DE", ip: "203.0.113.7" }
  return [
    { ...base, id: `${format}-a-${n}`, ts, ua: UA.gptbot, path: `/docs/${format}`, query: "lang=en&x=1", status: 200 },
    { ...base, id: `${format}-b-${n}`, ts: ts + 1500, ua: UA.claudebot, path: `/docs/${format}/second`, query: "", status: null, referrer: "https://example.org/a b" },
    { ...base, id: `${format}-c-${n}`, ts: ts + 2000, ua: UA.chrome, path: "/", query: "", status: 200 },
    { ...base, id: `${format}-d-${n}`, ts: Date.UTC(1970, 0, 2), ua: UA.gptbot, path: `/docs/${format}/old`, query: "", status: 200 }
  ]
}
/** What a delivery of sourceRecords() plus one malformed record answers. */
export const EXPECTED = { scanned: 5, accepted: 2, skipped: 3 } as const

const iso = (ms: number) => new Date(ms).toISOString()
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const pad = (n: number) => String(n).padStart(2, "0")
/** Common Log Format time, written in UTC-7 as nginx on a server in that zone would. */
const clf = (ms: number) => {
  const d = new Date(ms - 7 * 3600_000)
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} -0700`
}
const enc = (s: string) => encodeURIComponent(s).replace(/%2F/g, "/").replace(/%3A/g, ":").replace(/%2C/g, ",").replace(/%3B/g, ";").replace(/%2B/g, "+").replace(/%40/g, "@")
const pathQuery = (r: SourceRecord) => (r.query === "" ? r.path : `${r.path}?${r.query}`)

/** developers.cloudflare.com/logs/reference/log-fields/zone/http_requests/ */
const cloudflare = (r: SourceRecord, i: number) =>
  JSON.stringify({
    ClientIP: r.ip,
    ClientCountry: r.country.toLowerCase(),
    ClientRequestHost: r.host,
    ClientRequestMethod: "GET",
    ClientRequestURI: pathQuery(r),
    ClientRequestPath: r.path,
    ClientRequestProtocol: "HTTP/2",
    ClientRequestReferer: r.referrer,
    ClientRequestUserAgent: r.ua,
    EdgeResponseStatus: r.status ?? 0,
    EdgeResponseBytes: 1935,
    CacheCacheStatus: "miss",
    // Alternating the job's timestamp formats: RFC 3339 and Unix nanoseconds.
    EdgeStartTimestamp: i % 2 === 0 ? iso(r.ts) : r.ts * 1_000_000,
    EdgeEndTimestamp: i % 2 === 0 ? iso(r.ts + 7) : (r.ts + 7) * 1_000_000,
    RayID: r.id.replace(/[^a-z0-9]/g, "").slice(0, 16) + String(i)
  })

/** The project's published Fastly log format (FASTLY_LOG_FORMAT). */
const fastly = (r: SourceRecord) => {
  const record: Record<string, unknown> = {
    timestamp: iso(r.ts).replace(/\.\d+Z$/, "+0000"),
    request_id: r.id,
    client_ip: r.ip,
    geo_country_code: r.country,
    host: r.host,
    url: pathQuery(r),
    request_method: "GET",
    request_referer: r.referrer,
    request_user_agent: r.ua
  }
  if (r.status !== null) record.response_status = r.status
  return JSON.stringify(record)
}

/** techdocs.akamai.com/datastream2/docs/data-set-parameters, JSON log format. */
const akamai = (r: SourceRecord) =>
  JSON.stringify({
    version: 1,
    cp: "123456",
    reqId: r.id,
    reqTimeSec: (r.ts / 1000).toFixed(3),
    bytes: "4995",
    cliIP: r.ip,
    statusCode: r.status === null ? "-" : String(r.status),
    proto: "HTTPS",
    reqHost: r.host,
    reqMethod: "GET",
    reqPath: enc(r.path),
    reqPort: "443",
    rspContentLen: "5000",
    rspContentType: "text/html",
    UA: enc(r.ua),
    queryStr: r.query === "" ? "-" : r.query,
    referer: r.referrer === "" ? "-" : enc(r.referrer),
    cacheStatus: "1",
    country: r.country,
    city: "BERLIN",
    turnAroundTimeMSec: "11"
  })

/** docs.netlify.com/manage/monitoring/log-drains, traffic logs. */
const netlify = (r: SourceRecord) => {
  const record: Record<string, unknown> = {
    log_type: "traffic",
    request_id: r.id,
    timestamp: iso(r.ts),
    client_ip: r.ip,
    country: r.country,
    hostname: r.host,
    method: "GET",
    url: pathQuery(r),
    referrer: r.referrer,
    user_agent: r.ua,
    content_type: "text/html",
    duration: 12,
    request_size: 310,
    response_size: 5120,
    deploy_id: "6571e0b0c7d1b70008a1b2c3"
  }
  if (r.status !== null) record.status_code = r.status
  return JSON.stringify(record)
}

/** docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logs-reference.html */
const cloudfront = (r: SourceRecord) => {
  const t = iso(r.ts)
  return [
    t.slice(0, 10), t.slice(11, 19), "FRA56-P1", "5120", r.ip, "GET", "d111111abcdef8.cloudfront.net", enc(r.path),
    r.status === null ? "000" : String(r.status), r.referrer === "" ? "-" : enc(r.referrer), enc(r.ua).replace(/\+/g, "%2B"),
    r.query === "" ? "-" : r.query, "-", "Miss", r.id, r.host, "https", "310", "0.012", "-", "TLSv1.3",
    "TLS_AES_128_GCM_SHA256", "Miss", "HTTP/2.0", "-", "-", "51234", "0.011", "Miss", "text/html", "5000", "-", "-"
  ].join("\t")
}
const CLOUDFRONT_HEADER = [
  "#Version: 1.0",
  "#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end"
]

/** nginx `combined`. */
const combined = (r: SourceRecord) =>
  `${r.ip} - - [${clf(r.ts)}] "GET ${pathQuery(r)} HTTP/1.1" ${r.status ?? "-"} 5120 "${r.referrer || "-"}" "${r.ua}"`

const MALFORMED: Record<SourceFormat, string> = {
  cloudflare: `{"RayID":"8c1f9e0a7b6d5c4e","ClientRequestUserAgent":`,
  fastly: `{"request_user_agent":"GPTBot","url":`,
  akamai: `{"reqId":"x","reqTimeSec":`,
  netlify: `{"log_type":"traffic","url":"/x",`,
  cloudfront: "2026-01-01\tgarbage",
  combined: `203.0.113.7 - - [not a time] "GET`
}

const LINE: Record<SourceFormat, (r: SourceRecord, i: number) => string> = { cloudflare, fastly, akamai, netlify, cloudfront, combined }

/** One delivery (or file) of the format: the records, with the malformed one third. */
export const sourceBody = (format: SourceFormat, records: ReadonlyArray<SourceRecord>): string => {
  const lines = records.map((r, i) => LINE[format](r, i))
  lines.splice(2, 0, MALFORMED[format])
  return [...(format === "cloudfront" ? CLOUDFRONT_HEADER : []), ...lines].join("\n") + "\n"
}

export const sourceGzip = (format: SourceFormat, records: ReadonlyArray<SourceRecord>) => gzip(sourceBody(format, records))
