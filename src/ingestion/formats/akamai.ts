import type { LogRequest } from "../Records.js"
import { dash, type JsonObject, statusFrom, str as raw, timeOf, toRequest, urlDecode } from "./common.js"

/** DataStream writes "-" for an empty value (JSON streams usually omit the field instead). */
const str = (v: unknown) => dash(raw(v))

/**
 * Akamai DataStream 2, JSON lines to a custom HTTPS endpoint. Field names:
 * techdocs.akamai.com/datastream2/docs/data-set-parameters and .../log-format. Octets outside
 * 0x21..0x7E arrive hex-encoded (RFC 1738): the User-Agent, referrer and host are decoded; the
 * path and query are not (a decoded `%2F` or `%3F` would change them) but take the canonical form
 * every source gives them (Records.ts canonicalPath). reqTimeSec is Unix seconds with a fraction,
 * as a string; reqId is the record's id.
 */
export const isAkamai = (r: JsonObject): boolean => "reqTimeSec" in r || ("reqId" in r && "cliIP" in r) || "reqPath" in r

export const fromAkamai = (r: JsonObject, receivedAt: number): LogRequest | null => {
  const path = str(r.reqPath)
  return toRequest({
    id: str(r.reqId),
    ts: timeOf(r.reqTimeSec),
    method: str(r.reqMethod),
    host: urlDecode(str(r.reqHost)),
    // reqPath comes without its leading slash in some streams.
    url: path === "" ? "" : path.startsWith("/") ? path : "/" + path,
    query: str(r.queryStr),
    ua: urlDecode(str(r.UA)),
    referrer: urlDecode(str(r.referer)),
    status: statusFrom(r.statusCode),
    ip: str(r.cliIP),
    country: str(r.country)
  }, receivedAt)
}
