import type { LogRequest } from "../Records.js"
import { type JsonObject, statusFrom, str, timeOf, toRequest } from "./common.js"

/**
 * Cloudflare Logpush, `http_requests` dataset, to an HTTP destination (NDJSON, usually gzip).
 * Field names: developers.cloudflare.com/logs/reference/log-fields/zone/http_requests/.
 * EdgeStartTimestamp is RFC 3339 or Unix seconds / milliseconds / nanoseconds, depending on the
 * job's timestamp format; RayID is the record's id.
 */
export const isCloudflare = (r: JsonObject): boolean =>
  "RayID" in r || "EdgeStartTimestamp" in r || "ClientRequestUserAgent" in r || "ClientRequestURI" in r

export const fromCloudflare = (r: JsonObject, receivedAt: number): LogRequest | null =>
  toRequest({
    id: str(r.RayID),
    ts: timeOf(r.EdgeStartTimestamp),
    method: str(r.ClientRequestMethod),
    host: str(r.ClientRequestHost),
    url: str(r.ClientRequestURI) || str(r.ClientRequestPath),
    query: "",
    ua: str(r.ClientRequestUserAgent),
    referrer: str(r.ClientRequestReferer),
    status: statusFrom(r.EdgeResponseStatus),
    ip: str(r.ClientIP),
    country: str(r.ClientCountry)
  }, receivedAt)
