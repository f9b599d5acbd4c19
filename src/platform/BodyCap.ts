import { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"

/**
 * Bun's own request body limit, set out of reach: Bun would answer a bare 413 (no JSON, no
 * request id, no security headers) before the app sees the request. The middleware enforces
 * MAX_BODY_BYTES instead: a declared length at once, unread; a chunked body as it is read.
 */
export const BUN_BODY_LIMIT = Number.MAX_SAFE_INTEGER

/** A chunked body (no declared length) counted as it is read: past `max` bytes the read fails. */
export const capChunkedBody = (
  request: HttpServerRequest.HttpServerRequest,
  max: number,
  onOverflow: () => void
): HttpServerRequest.HttpServerRequest => {
  const source = request.source
  if (request.method === "GET" || request.method === "HEAD") return request
  if (!(source instanceof Request) || source.body === null) return request
  let total = 0
  const counted = source.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength
        if (total <= max) return controller.enqueue(chunk)
        onOverflow()
        controller.error(new Error("request body too large"))
      }
    })
  )
  const init: RequestInit & { duplex: "half" } = { method: source.method, headers: source.headers, body: counted, duplex: "half" }
  const remote = request.remoteAddress
  return HttpServerRequest.fromWeb(new Request(source.url, init)).modify({
    url: request.url,
    ...(Option.isSome(remote) ? { remoteAddress: remote.value } : {})
  })
}
