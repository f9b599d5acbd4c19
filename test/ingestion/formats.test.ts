import { describe, expect, it } from "bun:test"
import { makeDrainDecoder } from "../../src/ingestion/DrainDecoder.js"
import { fromAkamai } from "../../src/ingestion/formats/akamai.js"
import { DEFAULT_COLUMNS, fieldsHeader, fromCloudFrontLine } from "../../src/ingestion/formats/cloudfront.js"
import { fromCloudflare } from "../../src/ingestion/formats/cloudflare.js"
import { clfTime, fromCombinedLine } from "../../src/ingestion/formats/combined.js"
import { ContentKeys, epochToMs, statusFrom, timeOf } from "../../src/ingestion/formats/common.js"
import { FASTLY_LOG_FORMAT } from "../../src/ingestion/formats/fastly.js"
import { fromNetlify } from "../../src/ingestion/formats/netlify.js"
import { decodeDelivery, encodeDelivery } from "../../src/ingestion/Spool.js"
import { gzip, UA } from "./fixtures.js"

/** The decoders on their own: the rules each platform's documentation implies. */
const NOW = Date.UTC(2026, 10, 23, 12)
const T = Date.UTC(2026, 10, 21, 10, 0, 0)

describe("time and status", () => {
  it("Unix seconds, milliseconds, microseconds and nanoseconds by magnitude; RFC 3339; numeric strings", () => {
    for (const v of [T / 1000, T, T * 1000, T * 1_000_000]) expect(Math.round(epochToMs(v))).toBe(T)
    expect(timeOf("2026-11-21T10:00:00Z")).toBe(T)
    expect(timeOf("2026-11-21T10:00:00+0000")).toBe(T)
    expect(timeOf(String(T / 1000) + ".250")).toBe(T + 250)
    expect(Number.isNaN(timeOf("yesterday"))).toBe(true)
  })
  it("a status: absent and sentinels are none, out of range or not a number is garbage", () => {
    expect(statusFrom(200)).toBe(200)
    expect(statusFrom("404")).toBe(404)
    for (const none of [undefined, null, "-", "", 0, "000", -1]) expect(statusFrom(none)).toBeNull()
    for (const bad of [999, 42, "abc"]) expect(statusFrom(bad)).toBeUndefined()
  })
  it("Common Log Format time with its zone", () => {
    expect(clfTime("21/Nov/2026:03:00:00 -0700")).toBe(T)
    expect(clfTime("21/Nov/2026:11:00:00 +0100")).toBe(T)
    expect(Number.isNaN(clfTime("21/Foo/2026:11:00:00 +0100"))).toBe(true)
  })
})

describe("formats", () => {
  it("Cloudflare: ClientRequestURI with its query, RayID as the id, the country upper-cased", () => {
    const r = fromCloudflare({ RayID: "8c1f", EdgeStartTimestamp: T * 1e6, ClientRequestURI: "/a?b=1", ClientRequestHost: "WWW.Acme.com", ClientRequestUserAgent: UA.gptbot, ClientCountry: "de", EdgeResponseStatus: 0, ClientIP: "2001:db8::1" }, NOW)!
    expect(r).toMatchObject({ recordId: "8c1f", ts: T, path: "/a", query: "b=1", host: "www.acme.com", country: "DE", status: null, clientIp: "2001:db8::1", method: "GET" })
  })
  it("Akamai: URL-encoded values decoded (the path and query kept canonical), '-' empty, reqTimeSec with a fraction", () => {
    const r = fromAkamai({ reqId: "1a2b", reqTimeSec: `${T / 1000}.125`, reqPath: "docs/caf%C3%A9", queryStr: "q=a%20b", UA: "Mozilla/5.0%20(compatible;%20GPTBot/1.2)", referer: "-", statusCode: "301", cliIP: "203.0.113.9", reqHost: "www.acme.com", reqMethod: "HEAD", country: "US" }, NOW)!
    expect(r).toMatchObject({ recordId: "1a2b", ts: T + 125, path: "/docs/caf%C3%A9", query: "q=a%20b", ua: "Mozilla/5.0 (compatible; GPTBot/1.2)", referrer: "", status: 301, method: "HEAD", country: "US" })
  })
  it("Netlify: traffic logs only", () => {
    expect(fromNetlify({ log_type: "functions", message: "hi", timestamp: "2026-11-21T10:00:00Z" }, NOW)).toBeNull()
    expect(fromNetlify({ log_type: "traffic", request_id: "01J", timestamp: "2026-11-21T10:00:00Z", url: "/x?y", user_agent: UA.gptbot, status_code: 200, hostname: "a.netlify.app" }, NOW)).toMatchObject({ recordId: "01J", path: "/x", query: "y", host: "a.netlify.app" })
  })
  it("Fastly: the published format string is one JSON object once its placeholders are filled", () => {
    const filled = FASTLY_LOG_FORMAT.replace(/%\{[^}]*(?:\\\}[^}]*)*\}V/g, (m) => (m.includes("resp.status") ? "200" : "x"))
    const record = JSON.parse(filled) as Record<string, unknown>
    expect(Object.keys(record).sort()).toEqual(["client_ip", "geo_country_code", "host", "request_id", "request_method", "request_referer", "request_user_agent", "response_status", "timestamp", "url"])
  })
  it("CloudFront: by the #Fields header (any order), x-host-header preferred, User-Agent decoded once", () => {
    const columns = fieldsHeader("#Fields: time date cs-uri-stem cs(User-Agent) sc-status x-edge-request-id cs(Host) x-host-header c-country")!
    const r = fromCloudFrontLine(["10:00:00", "2026-11-21", "/p", "Mozilla/5.0%20(compatible;%20GPTBot/1.2)%2520x", "000", "abc==", "d1.cloudfront.net", "www.acme.com", "fr"].join("\t"), columns, NOW)
    expect(r.request).toMatchObject({ ts: T, path: "/p", ua: "Mozilla/5.0 (compatible; GPTBot/1.2)%20x", status: null, recordId: "abc==", host: "www.acme.com", country: "FR" })
    expect(fromCloudFrontLine("2026-11-21\t10:00:00\tshort", DEFAULT_COLUMNS, NOW).parsed).toBe(false)
  })
  it("combined: escaped quotes, a bad request line is garbage, not another format", () => {
    const ok = fromCombinedLine(`203.0.113.7 - frank [21/Nov/2026:10:00:00 +0000] "GET /a?b=\\"c\\" HTTP/1.1" 200 1 "-" "${UA.gptbot}"`, NOW)
    expect(ok.request).toMatchObject({ path: "/a", query: "b=%22c%22", referrer: "", status: 200, clientIp: "203.0.113.7" })
    expect(fromCombinedLine(`203.0.113.7 - - [21/Nov/2026:10:00:00 +0000] "\\x16\\x03" 400 0 "-" "-"`, NOW)).toEqual({ parsed: true, request: null })
    expect(fromCombinedLine("hello world", NOW).parsed).toBe(false)
  })
  it("garbage records: before 2000, more than a day ahead, a 1 MB User-Agent", () => {
    const base = { RayID: "x", ClientRequestURI: "/", ClientRequestUserAgent: UA.gptbot }
    expect(fromCloudflare({ ...base, EdgeStartTimestamp: "1999-12-31T23:59:59Z" }, NOW)).toBeNull()
    expect(fromCloudflare({ ...base, EdgeStartTimestamp: NOW + 2 * 86_400_000 }, NOW)).toBeNull()
    expect(fromCloudflare({ ...base, EdgeStartTimestamp: NOW + 3_600_000 }, NOW)).not.toBeNull()
    expect(fromCloudflare({ ...base, EdgeStartTimestamp: T, ClientRequestUserAgent: "x".repeat(1 << 20) }, NOW)).toBeNull()
  })
})

describe("content keys and the decoder", () => {
  it("identical lines get distinct keys in order, the same keys on a second pass", () => {
    const a = new ContentKeys()
    const b = new ContentKeys()
    const keysA = ["l1", "l2", "l1", "l1"].map((l) => a.next(l))
    const keysB = ["l1", "l2", "l1", "l1"].map((l) => b.next(l))
    expect(new Set(keysA).size).toBe(4)
    expect(keysA).toEqual(keysB)
  })
  it("a cut gzip keeps whole lines only; a forced format reads only its own lines", () => {
    const decoder = makeDrainDecoder({ maxInflatedBytes: 1 << 24 })
    const line = (i: number) => `203.0.113.7 - - [21/Nov/2026:10:00:${String(i % 60).padStart(2, "0")} +0000] "GET /${i} HTTP/1.1" 200 1 "-" "${UA.gptbot}"`
    const text = Array.from({ length: 500 }, (_, i) => line(i)).join("\n") + "\n"
    const whole = gzip(text)
    const cut = decoder.decode(whole.slice(0, Math.floor(whole.length / 2)), NOW)
    expect(cut.unparseable).toBeNull()
    expect(cut.requests.length).toBe(cut.scanned)
    expect(cut.requests.at(-1)!.path).toBe(`/${cut.scanned - 1}`)
    expect(decoder.decode(new TextEncoder().encode(text), NOW, "cloudfront").unparseable).toBe("not a log")
    expect(decoder.decode(new TextEncoder().encode(text), NOW, "combined").requests.length).toBe(500)
  })
  it("the spool keeps a delivery's format", () => {
    const d = { id: "d1", receivedAt: NOW, accountId: 1, siteId: "s", signature: null, body: new Uint8Array([1, 2]), format: "akamai" as const }
    expect(decodeDelivery(encodeDelivery(d))).toEqual(d)
    const { format: _, ...auto } = d
    expect(decodeDelivery(encodeDelivery(auto))).toEqual(auto)
  })
})
