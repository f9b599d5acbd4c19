import type { LogRequest } from "../Records.js"
import { countryCode, type JsonObject, statusFrom, str, timeOf, toRequest } from "./common.js"

/**
 * Fastly real-time log streaming to an HTTPS endpoint, one JSON object a line, with the log
 * format this project publishes (docs/ingestion.md, `FASTLY_LOG_FORMAT`). Its field names are
 * those of Fastly's own JSON logging example (fastly.com/documentation/guides/integrations/
 * logging-endpoints/log-streaming-https and "Custom log formats"). That example names the
 * country `geo_country` (client.geo.country_name); ours `geo_country_code`: either is read, a
 * name mapped to its ISO code.
 */
export const FASTLY_LOG_FORMAT =
  `{"timestamp":"%{strftime(\\{"%Y-%m-%dT%H:%M:%S%z"\\}, time.start)}V",` +
  `"request_id":"%{json.escape(req.xid)}V",` +
  `"client_ip":"%{req.http.Fastly-Client-IP}V",` +
  `"geo_country_code":"%{client.geo.country_code}V",` +
  `"host":"%{if(req.http.Fastly-Orig-Host, req.http.Fastly-Orig-Host, req.http.Host)}V",` +
  `"url":"%{json.escape(req.url)}V",` +
  `"request_method":"%{json.escape(req.method)}V",` +
  `"response_status":%{resp.status}V,` +
  `"request_referer":"%{json.escape(req.http.referer)}V",` +
  `"request_user_agent":"%{json.escape(req.http.User-Agent)}V"}`

export const isFastly = (r: JsonObject): boolean =>
  "request_user_agent" in r || "response_status" in r || "request_method" in r

export const fromFastly = (r: JsonObject, receivedAt: number): LogRequest | null =>
  toRequest({
    id: str(r.request_id),
    ts: timeOf(r.timestamp),
    method: str(r.request_method),
    host: str(r.host),
    url: str(r.url),
    query: "",
    ua: str(r.request_user_agent),
    referrer: str(r.request_referer),
    status: statusFrom(r.response_status),
    ip: str(r.client_ip),
    country: countryCode(str(r.geo_country_code) || str(r.geo_country))
  }, receivedAt)
