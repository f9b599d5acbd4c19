/**
 * The same requests written in each log source's format, for bench/ingest.ts: the per-format
 * decode cost next to the Vercel decoder's, and the combined log that `ship` sends.
 */
export interface BenchRequest {
  readonly id: string
  readonly ts: number
  readonly ua: string
  readonly path: string
  readonly status: number
  readonly ip: string
  readonly referrer: string
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
const pad = (n: number) => String(n).padStart(2, "0")
export const clf = (ms: number) => {
  const d = new Date(ms)
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`
}
const iso = (ms: number) => new Date(ms).toISOString()
const enc = (s: string) => s.replace(/ /g, "%20")
const [pathOf, queryOf] = [(p: string) => p.split("?")[0]!, (p: string) => p.split("?")[1] ?? ""]

export const LINE: Record<string, (r: BenchRequest) => string> = {
  vercel: (r) =>
    JSON.stringify({
      id: r.id, message: "", timestamp: r.ts, type: "stdout", source: "lambda", projectId: "prj_bench", deploymentId: "dpl_bench",
      host: "acme-bench.vercel.app", path: pathOf(r.path), statusCode: r.status, requestId: `req_${r.id}`,
      proxy: { timestamp: r.ts, method: "GET", host: "www.acme.example", path: r.path, userAgent: [r.ua], referer: r.referrer, region: "fra1", statusCode: r.status, clientIp: r.ip, scheme: "https", vercelCache: "MISS" }
    }),
  cloudflare: (r) =>
    JSON.stringify({
      ClientIP: r.ip, ClientCountry: "de", ClientRequestHost: "www.acme.example", ClientRequestMethod: "GET", ClientRequestURI: r.path,
      ClientRequestPath: pathOf(r.path), ClientRequestProtocol: "HTTP/2", ClientRequestReferer: r.referrer, ClientRequestUserAgent: r.ua,
      EdgeResponseStatus: r.status, EdgeResponseBytes: 5120, CacheCacheStatus: "miss", EdgeStartTimestamp: iso(r.ts), EdgeEndTimestamp: iso(r.ts + 9), RayID: r.id
    }),
  fastly: (r) =>
    JSON.stringify({
      timestamp: iso(r.ts).replace(/\.\d+Z$/, "+0000"), request_id: r.id, client_ip: r.ip, geo_country_code: "DE", host: "www.acme.example",
      url: r.path, request_method: "GET", response_status: r.status, request_referer: r.referrer, request_user_agent: r.ua
    }),
  akamai: (r) =>
    JSON.stringify({
      version: 1, cp: "123456", reqId: r.id, reqTimeSec: (r.ts / 1000).toFixed(3), bytes: "5120", cliIP: r.ip, statusCode: String(r.status), proto: "HTTPS",
      reqHost: "www.acme.example", reqMethod: "GET", reqPath: pathOf(r.path), reqPort: "443", rspContentLen: "5000", rspContentType: "text/html",
      UA: enc(r.ua), queryStr: queryOf(r.path) || "-", referer: r.referrer === "" ? "-" : r.referrer, cacheStatus: "1", country: "DE", city: "BERLIN"
    }),
  netlify: (r) =>
    JSON.stringify({
      log_type: "traffic", request_id: r.id, timestamp: iso(r.ts), client_ip: r.ip, country: "DE", hostname: "www.acme.example", method: "GET",
      url: r.path, status_code: r.status, referrer: r.referrer, user_agent: r.ua, content_type: "text/html", duration: 12, request_size: 310, response_size: 5120
    }),
  cloudfront: (r) => {
    const t = iso(r.ts)
    return [
      t.slice(0, 10), t.slice(11, 19), "FRA56-P1", "5120", r.ip, "GET", "d111111abcdef8.cloudfront.net", pathOf(r.path), String(r.status),
      r.referrer || "-", enc(r.ua), queryOf(r.path) || "-", "-", "Miss", r.id, "www.acme.example", "https", "310", "0.012", "-", "TLSv1.3",
      "TLS_AES_128_GCM_SHA256", "Miss", "HTTP/2.0", "-", "-", "51234", "0.011", "Miss", "text/html", "5000", "-", "-"
    ].join("\t")
  },
  combined: (r) => `${r.ip} - - [${clf(r.ts)}] "GET ${r.path} HTTP/1.1" ${r.status} 5120 "${r.referrer || "-"}" "${r.ua}"`
}

export const CLOUDFRONT_HEADER =
  "#Version: 1.0\n#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end\n"

export const body = (format: string, requests: ReadonlyArray<BenchRequest>) =>
  (format === "cloudfront" ? CLOUDFRONT_HEADER : "") + requests.map(LINE[format]!).join("\n") + "\n"
