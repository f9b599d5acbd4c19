import { clean, ipOf, type LogRequest, MAX_FIELD, MAX_UA, methodOf, splitPath, statusOf, str, validTs } from "../Records.js"
import { isObject, type JsonObject } from "./common.js"

/**
 * Vercel's log drain (docs/ingestion.md), one record. Only a record with a proxy object carrying a method is an
 * HTTP request; proxy.userAgent is an array; proxy.host is preferred over host; statusCode -1
 * is no status; clientIp may be absent; proxy.region is not a country. A request without a
 * path cannot be shown on any page: it is not kept either.
 */
export const fromVercel = (record: JsonObject, receivedAt: number): LogRequest | null => {
  const proxy = record.proxy
  if (!isObject(proxy)) return null
  const method = proxy.method
  if (typeof method !== "string" || method.trim() === "") return null
  const rawPath = str(proxy.path)
  if (rawPath === undefined || rawPath.trim() === "") return null
  const uaField = proxy.userAgent
  const ua = Array.isArray(uaField)
    ? (uaField.find((v): v is string => typeof v === "string" && v !== "") ?? "")
    : (str(uaField) ?? "")
  const proxyTs = proxy.timestamp
  const recordTs = record.timestamp
  const ts = typeof proxyTs === "number" && validTs(proxyTs)
    ? Math.trunc(proxyTs)
    : typeof recordTs === "number" && validTs(recordTs)
    ? Math.trunc(recordTs)
    : receivedAt
  const id = record.id
  const { path, query } = splitPath(rawPath)
  return {
    recordId: typeof id === "string" && id !== "" ? clean(id, 200) : typeof id === "number" ? String(id) : null,
    ts,
    method: methodOf(method),
    host: clean((str(proxy.host) || str(record.host) || "").toLowerCase(), 255),
    path,
    query,
    ua: clean(ua, MAX_UA),
    referrer: clean(str(proxy.referer) ?? "", MAX_FIELD),
    status: statusOf(proxy.statusCode),
    clientIp: ipOf(proxy.clientIp),
    country: null
  }
}
