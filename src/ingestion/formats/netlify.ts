import type { LogRequest } from "../Records.js"
import { type JsonObject, statusFrom, str, timeOf, toRequest } from "./common.js"

/**
 * Netlify log drain to a general HTTP endpoint (JSON array or NDJSON), traffic logs
 * (docs.netlify.com/manage/monitoring/log-drains). Every record names its `log_type`; only
 * `traffic` describes a served request: function, edge function, deploy and WAF logs are skipped.
 */
export const isNetlify = (r: JsonObject): boolean => "log_type" in r

export const fromNetlify = (r: JsonObject, receivedAt: number): LogRequest | null => {
  if (r.log_type !== "traffic") return null
  return toRequest({
    id: str(r.request_id),
    ts: timeOf(r.timestamp),
    method: str(r.method),
    host: str(r.hostname) || str(r.host),
    url: str(r.url) || str(r.path),
    query: "",
    ua: str(r.user_agent),
    referrer: str(r.referrer) || str(r.referer),
    status: statusFrom(r.status_code ?? r.status),
    ip: str(r.client_ip),
    country: str(r.country)
  }, receivedAt)
}
