import type { LogRequest } from "../Records.js"
import { dash, type JsonObject, statusFrom, str as raw, timeOf, toRequest, urlDecode } from "./common.js"

/** DataStream writes "-" for an empty value (JSON streams usually omit the field instead). */
const str = (v: unknown) => dash(raw(v))

/**
 * Akamai DataStream 2, JSON lines to a custom HTTPS endpoint. Field names:
 * techdocs.akamai.com/datastream2/docs/data-set-parameters and .../log-format. Values with
 * spaces or non-ASCII characters arrive URL-encoded (RFC 1738): they are decoded. reqTimeSec is
 * Unix seconds with a fraction, as a string; reqId is the record's id.
 */
export const isAkamai = (r: JsonObject): boolean => "reqTimeSec" in r || ("reqId" in r && "cliIP" in r) || "reqPath" in r

export const fromAkamai = (r: JsonObject, receivedAt: number): LogRequest | null => {
  const path = urlDecode(str(r.reqPath))
  return toRequest({
    id: str(r.reqId),
    ts: timeOf(r.reqTimeSec),
    method: str(r.reqMethod),
    host: urlDecode(str(r.reqHost)),
    // reqPath comes without its leading slash in some streams.
    url: path === "" ? "" : path.startsWith("/") ? path : "/" + path,
    query: urlDecode(str(r.queryStr)),
    ua: urlDecode(str(r.UA)),
    referrer: urlDecode(str(r.referer)),
    status: statusFrom(r.statusCode),
    ip: str(r.cliIP),
    country: str(r.country)
  }, receivedAt)
}
