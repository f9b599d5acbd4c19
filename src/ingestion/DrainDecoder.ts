import { Context, Effect, Layer } from "effect"
import { gunzipBounded, isGzip } from "../platform/Inflate.js"
import { IngestionConfig } from "./Config.js"
import { type LogFormat, LogDecoder, type LogSourceName } from "./formats/index.js"
import { gunzipTruncated } from "./formats/gzip.js"
import type { LogRequest } from "./Records.js"

/**
 * A log-drain delivery from raw bytes to typed requests (docs/ingestion.md):
 * gzip is detected by its magic bytes and inflated with a bound (a gzip bomb stops at the
 * bound, in bounded memory); a JSON array and NDJSON are told apart by the content, never by
 * Content-Type. Total: any bytes give a result, never an exception.
 */
export interface DecodedDelivery {
  /** Records seen: JSON values of the array, non-empty lines of NDJSON or text (header lines aside). */
  readonly scanned: number
  /** The records that are HTTP requests (Vercel: proxy with a method, and a path; see docs/ingestion.md). */
  readonly requests: ReadonlyArray<LogRequest>
  /** Why nothing could be read, when nothing could: "empty", "too large", "inflates too large", "bad gzip", "not a log". */
  readonly unparseable: string | null
  /** Records per format they parsed as (the log sources of docs/ingestion.md). */
  readonly byFormat?: Partial<Record<LogFormat, number>>
  /** The log source most records were read as (absent when nothing could be read). */
  readonly readAs?: LogSourceName | null
}

export interface DrainDecoderShape {
  /** `body` null means the body was over the size limit and was not read. */
  readonly decode: (body: Uint8Array | null, receivedAt: number, format?: LogFormat) => DecodedDelivery
}

export class DrainDecoder extends Context.Tag("DrainDecoder")<DrainDecoder, DrainDecoderShape>() {}

const unparseable = (why: string): DecodedDelivery => ({ scanned: 0, requests: [], unparseable: why })

// The service's one bounded inflater (src/platform/Inflate.ts), re-exported for the ingestion code.
export { gunzipBounded, isGzip } from "../platform/Inflate.js"

const utf8 = new TextDecoder("utf-8")

const pushValue = (out: Array<unknown>, value: unknown) => {
  if (Array.isArray(value)) {
    for (const v of value) out.push(v)
  } else {
    out.push(value)
  }
}

/**
 * The JSON values of a body: the elements of one JSON array (or one object), else NDJSON: one
 * value per line (a line holding an array gives its elements; a trailing comma, as in an array
 * written one record a line, is tolerated). Lines that do not parse are not records. Null when
 * nothing parses.
 */
export const parseRecords = (text: string): Array<unknown> | null => {
  let start = 0
  while (start < text.length && text.charCodeAt(start) <= 32) start++
  if (start === text.length) return null
  const first = text.charCodeAt(start)
  if (first === 0x5b /* [ */ || first === 0x7b /* { */) {
    try {
      const out: Array<unknown> = []
      pushValue(out, JSON.parse(text))
      return out
    } catch {
      // NDJSON, or a damaged array: line by line below.
    }
  }
  const out: Array<unknown> = []
  let parsed = false
  let from = start
  while (from < text.length) {
    let to = text.indexOf("\n", from)
    if (to === -1) to = text.length
    let line = text.slice(from, to).trim()
    from = to + 1
    if (line === "" || line === "[" || line === "]") continue
    if (line.endsWith(",")) line = line.slice(0, -1)
    try {
      pushValue(out, JSON.parse(line))
      parsed = true
    } catch {
      // not a record
    }
  }
  return parsed ? out : null
}

export const makeDrainDecoder = (options: { readonly maxInflatedBytes: number }): DrainDecoderShape => ({
  decode: (body, receivedAt, format = "auto") => {
    if (body === null) return unparseable("too large")
    if (body.length === 0) return unparseable("empty")
    let bytes = body
    let cut = false
    if (isGzip(bytes)) {
      const inflated = gunzipBounded(bytes, options.maxInflatedBytes)
      if ("error" in inflated) {
        // A stream cut short keeps the records before the cut (the cut one is dropped).
        const partial = inflated.error === "bad gzip" ? gunzipTruncated(bytes, options.maxInflatedBytes) : null
        if (partial === null) return unparseable(inflated.error)
        bytes = partial
        cut = true
      } else {
        bytes = inflated.ok
      }
    } else if (bytes.length > options.maxInflatedBytes) {
      return unparseable("too large")
    }
    const decoder = new LogDecoder(format, receivedAt)
    const requests: Array<LogRequest> = []
    decoder.text(utf8.decode(bytes), requests, cut)
    if (decoder.parsed === 0) return unparseable("not a log")
    return { scanned: decoder.scanned, requests, unparseable: null, byFormat: decoder.byFormat, readAs: decoder.readAs() }
  }
})

export const DrainDecoderLive = Layer.effect(
  DrainDecoder,
  Effect.map(IngestionConfig, (config) => makeDrainDecoder({ maxInflatedBytes: config.maxInflatedBytes }))
)
