import type { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"

/**
 * The client's IP address, by one rule everywhere (rate limits, the tag's stored hits):
 * with TRUST_PROXY, the last X-Forwarded-For entry (the one the proxy in front of the server
 * added; entries before it are whatever the client sent); else the socket's address. Never the
 * first, client-chosen entry (docs/security.md).
 */
export const clientIp = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string | null => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]
    if (forwarded !== undefined && forwarded !== "") {
      const last = forwarded.slice(forwarded.lastIndexOf(",") + 1).trim()
      if (last !== "") return last.slice(0, 64)
    }
  }
  const remote = request.remoteAddress
  return Option.isSome(remote) ? remote.value : null
}
