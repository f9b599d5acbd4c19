import type { HttpServerRequest } from "@effect/platform"
import { HttpServerResponse } from "@effect/platform"
import { maxHeaderSize } from "node:http"

/**
 * Over-long request targets and headers, answered by the app (docs/security.md, "Bounds on a request's
 * cost"). Bun refuses a request whose request line and headers pass its own limit with a bare 431 before
 * any app code runs, and its limit is a process flag (`--max-http-header-size`, default 16 KiB) that no
 * Bun.serve option changes. So `bun run start` raises Bun's limit to BUN_HEADER_LIMIT and the edge
 * answers past these smaller bounds itself: a JSON error with a request id, like every other answer.
 */

/** The longest request target (path and query) the edge accepts, in bytes: 414 beyond. */
export const MAX_TARGET_BYTES = 8 * 1024

/** The most the request line and header fields may weigh together, in bytes: 431 beyond (Bun's own default). */
export const MAX_HEADER_BYTES = 16 * 1024

/** Bun's limit as `bun run start` sets it (package.json); requests past it never reach the app. */
export const BUN_HEADER_LIMIT = 64 * 1024

/** Bun's limit in this process (the `--max-http-header-size` it was started with). */
export const bunHeaderLimit = (): number => maxHeaderSize

const targetTooLong = HttpServerResponse.unsafeJson(
  { error: `request target too long: at most ${MAX_TARGET_BYTES} bytes of path and query` },
  { status: 414, headers: { connection: "close" } }
)

const headersTooLarge = HttpServerResponse.unsafeJson(
  { error: `request headers too large: at most ${MAX_HEADER_BYTES} bytes of request line and headers` },
  { status: 431, headers: { connection: "close" } }
)

/** The refusal of a request whose target or headers pass the bounds, or undefined. */
export const headerRefusal = (request: HttpServerRequest.HttpServerRequest): HttpServerResponse.HttpServerResponse | undefined => {
  const url = request.url
  if (url.length > MAX_TARGET_BYTES) return targetTooLong
  // As on the wire: "METHOD target HTTP/1.1\r\n" and "name: value\r\n" per field (characters: the bound is coarse).
  let size = request.method.length + url.length + 11
  const headers = request.headers
  for (const name in headers) size += name.length + headers[name]!.length + 4
  return size > MAX_HEADER_BYTES ? headersTooLarge : undefined
}
