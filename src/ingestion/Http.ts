import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Chunk, Effect, Layer, Stream } from "effect"
import { CurrentAccount } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { PayloadTooLarge } from "../platform/HttpErrors.js"
import { metrics } from "../platform/Metrics.js"
import { encodedJson } from "../platform/FastJson.js"
import { BatchBodyLimit, DrainResponse, DrainVerify } from "./Api.js"
import { IngestionConfig } from "./Config.js"
import { Ingestion } from "./Ingestion.js"

const first = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

const nonEmpty = (value: string | undefined) => (value === undefined || value.trim() === "" ? undefined : value)

/** A header value carries visible ASCII, spaces and tabs only; the rest is dropped, the length bounded. */
export const headerSafe = (value: string) => value.replace(/[^\t\x20-\x7e]/g, "").slice(0, 1024)

export const DrainVerifyLive = Layer.succeed(
  DrainVerify,
  Effect.gen(function*() {
    const params = yield* HttpServerRequest.ParsedSearchParams
    const verify = first(params["verify"])
    if (verify === undefined) return
    const value = headerSafe(verify)
    // The spec's neutral name and the one a Vercel drain checks for: both, always.
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, { "x-drain-verify": value, "x-vercel-verify": value }))
    )
  })
)

export const BatchBodyLimitLive = Layer.effect(
  BatchBodyLimit,
  Effect.map(IngestionConfig, (config) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const length = Number(request.headers["content-length"])
      return Number.isFinite(length) && length > config.maxBodyBytes
        ? Effect.fail(new PayloadTooLarge({ error: `request body too large: at most ${config.maxBodyBytes} bytes` }))
        : Effect.void
    }))
)

/**
 * The raw body, or null when it is over `max` bytes (then it is not read past the limit:
 * a Content-Length over it is refused at once, a chunked body is cut off by the stream).
 * A body that fails to arrive reads as empty (an unparseable delivery).
 */
export const readBody = (request: HttpServerRequest.HttpServerRequest, max: number): Effect.Effect<Uint8Array | null> => {
  const length = Number(request.headers["content-length"] ?? NaN)
  if (Number.isFinite(length)) {
    if (length > max) return Effect.succeed(null)
    return request.arrayBuffer.pipe(
      Effect.map((buffer) => new Uint8Array(buffer)),
      Effect.orElseSucceed(() => new Uint8Array(0))
    )
  }
  let total = 0
  let over = false
  return request.stream.pipe(
    Stream.takeWhile((chunk) => {
      total += chunk.length
      over = total > max
      return !over
    }),
    Stream.runCollect,
    Effect.map((chunks) => {
      if (over) return null
      const out = new Uint8Array(total)
      let offset = 0
      for (const chunk of Chunk.toReadonlyArray(chunks)) {
        out.set(chunk, offset)
        offset += chunk.length
      }
      return out
    }),
    Effect.orElseSucceed(() => new Uint8Array(0))
  )
}

export const IngestionHttpLive = HttpApiBuilder.group(ServerApi, "ingestion", (handlers) =>
  Effect.gen(function*() {
    const ingestion = yield* Ingestion
    const config = yield* IngestionConfig
    return handlers
      .handle("ingest", ({ payload }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) => ingestion.batch(accountId, payload)).pipe(
          Effect.tap((result) => metrics.observeIngest("batch", { ...result, scanned: payload.records.length, skipped: payload.records.length - result.accepted }))
        ))
      .handleRaw("drain", ({ headers, request, urlParams }) =>
        Effect.gen(function*() {
          const { accountId } = yield* CurrentAccount
          const siteId = first(urlParams.site_id) ?? headers["x-service-site"]
          // docs/ingestion.md: 400 missing site_id comes before the body is read.
          const body = siteId === undefined || siteId.trim() === "" ? null : yield* readBody(request, config.maxBodyBytes)
          // A real Vercel drain signs in x-vercel-signature; the spec's neutral name is x-drain-signature.
          const signature = nonEmpty(headers["x-drain-signature"]) ?? nonEmpty(headers["x-vercel-signature"])
          const result = yield* ingestion.drain({ accountId, siteId, signature, body, format: first(urlParams.format) })
          metrics.observeIngest("drain", result)
          // Every delivery of every site comes here: the answer leaves in its wire form, encoded once (FastJson.ts).
          return encodedJson(DrainResponse, {
            accepted: result.accepted,
            scanned: result.scanned,
            skipped: result.skipped,
            monthly_used: result.monthly_used,
            monthly_cap: result.monthly_cap
          })
        }))
  })).pipe(Layer.provide([DrainVerifyLive, BatchBodyLimitLive]))
