import type { LogRequest } from "../Records.js"
import { fromAkamai, isAkamai } from "./akamai.js"
import {
  type CloudFrontColumns,
  DEFAULT_COLUMNS,
  fieldsHeader,
  fromCloudFrontJson,
  fromCloudFrontLine,
  isCloudFrontJson,
  looksCloudFront
} from "./cloudfront.js"
import { fromCloudflare, isCloudflare } from "./cloudflare.js"
import { fromCombinedLine } from "./combined.js"
import { ContentKeys, isObject, type JsonObject, LOG_FORMATS, type LogFormat, MAX_LINE } from "./common.js"
import { fromFastly, isFastly } from "./fastly.js"
import { fromNetlify, isNetlify } from "./netlify.js"
import { fromVercel } from "./vercel.js"

export { isLogFormat, LOG_FORMATS, type LogFormat } from "./common.js"

/** A log source: every format but `auto`. */
export type LogSourceName = Exclude<LogFormat, "auto">

/** What a text line gave: whether it is a record of the source, and its request when it is one. */
export interface LineRead {
  readonly parsed: boolean
  readonly request: LogRequest | null
}

/**
 * How one log source is read (docs/ingestion.md, "Log sources"). A source reads JSON records, text
 * lines, or both; `detect` tells its records apart under `auto`, `decode` reads one.
 */
export interface LogSource {
  readonly json?: {
    readonly detect: (record: JsonObject) => boolean
    /** A request; null for a record of the source that is no request; undefined for a value that is not its record. */
    readonly decode: (record: JsonObject, receivedAt: number) => LogRequest | null | undefined
  }
  readonly text?: {
    /** `columns`: the fields of the last `#Fields:` header read, if any. */
    readonly detect: (line: string, columns: CloudFrontColumns | null) => boolean
    readonly decode: (line: string, columns: CloudFrontColumns | null, receivedAt: number) => LineRead
  }
  /**
   * A request without the platform's id is keyed by the content of its text (ContentKeys). Vercel's keep
   * their own rule: the record's `id`, else the delivery's key.
   */
  readonly contentKeys: boolean
}

/** Every log source: adding one is a decoder in this folder and its entry here (and its place in the orders below). */
export const LOG_SOURCES: Readonly<Record<LogSourceName, LogSource>> = {
  vercel: { json: { detect: () => true, decode: fromVercel }, contentKeys: false },
  cloudflare: { json: { detect: isCloudflare, decode: fromCloudflare }, contentKeys: true },
  fastly: { json: { detect: isFastly, decode: fromFastly }, contentKeys: true },
  akamai: { json: { detect: isAkamai, decode: fromAkamai }, contentKeys: true },
  netlify: { json: { detect: isNetlify, decode: fromNetlify }, contentKeys: true },
  cloudfront: {
    // Standard logging v2 delivers JSON records with the W3C field names; other JSON is not CloudFront's.
    json: { detect: isCloudFrontJson, decode: (r, receivedAt) => (isCloudFrontJson(r) ? fromCloudFrontJson(r, receivedAt) : undefined) },
    text: {
      detect: (line, columns) => columns !== null || looksCloudFront(line),
      decode: (line, columns, receivedAt) => fromCloudFrontLine(line, columns ?? DEFAULT_COLUMNS, receivedAt)
    },
    contentKeys: true
  },
  combined: { text: { detect: () => true, decode: (line, _columns, receivedAt) => fromCombinedLine(line, receivedAt) }, contentKeys: true }
}

/**
 * The order `auto` tries the sources in: the JSON ones by their field names (Vercel, which detects
 * everything, last), the text ones by their lines' shape (CloudFront's `#Fields:` header or a
 * tab-separated line starting with a date, then combined).
 */
const JSON_ORDER: ReadonlyArray<LogSourceName> = ["cloudflare", "akamai", "netlify", "fastly", "cloudfront", "vercel"]
const TEXT_ORDER: ReadonlyArray<LogSourceName> = ["cloudfront", "combined"]
/**
 * `auto` for a JSON record: the first source of JSON_ORDER whose `detect` holds, as one chain of closures
 * built once (each call site sees one detector: a loop over them all was slower on Vercel's records).
 */
const detectJson: (record: JsonObject) => LogSourceName = JSON_ORDER.reduceRight<(record: JsonObject) => LogSourceName>(
  (next, name) => {
    const detect = LOG_SOURCES[name].json?.detect
    return detect === undefined ? next : (record) => (detect(record) ? name : next(record))
  },
  () => "vercel"
)

/** The text a record without an id is keyed by when it has no line of its own: what was read from it. */
const fieldsText = (r: LogRequest): string =>
  `${r.ts}\t${r.method}\t${r.host}\t${r.path}\t${r.query}\t${r.status}\t${r.clientIp}\t${r.country}\t${r.referrer}\t${r.ua}`

/**
 * The log sources behind one decoder (docs/ingestion.md, "Log sources"): a stream of lines or
 * JSON values in, requests out, with the counts the drain answers. `auto` tells the sources apart
 * record by record (JSON_ORDER, TEXT_ORDER); a forced format reads only its own records.
 *
 * Every request gets a record id: the platform's (RayID, reqId, request_id, x-edge-request-id)
 * or, when it has none, the content key of its text (ContentKeys): the line as read, or, for an
 * element of a JSON array (no line of its own), the fields read from it. Never the element
 * re-serialised: a value nested 200,000 deep would overflow the stack, and the fields are all the
 * record says. Vercel's records keep their own rule (LogSource.contentKeys).
 */
export class LogDecoder {
  /** Records seen: JSON values, and non-empty lines that are not header or comment lines. */
  scanned = 0
  /** Records that parsed as a record of some format (requests or not). */
  parsed = 0
  /** Scanned records per format they parsed as (requests or not). */
  readonly byFormat: Partial<Record<LogSourceName, number>> = {}
  private columns: CloudFrontColumns | null = null
  private readonly keys = new ContentKeys()

  private readonly textOrder: ReadonlyArray<LogSourceName>

  constructor(readonly format: LogFormat, readonly receivedAt: number) {
    this.textOrder = format === "auto" ? TEXT_ORDER : [format]
  }

  /** The source most records were read as (the first of the sources in a tie); null when none was. */
  readAs(): LogSourceName | null {
    let best: LogSourceName | null = null
    for (const name of LOG_FORMATS) {
      if (name !== "auto" && (this.byFormat[name] ?? 0) > (best === null ? 0 : this.byFormat[best] ?? 0)) best = name
    }
    return best
  }

  private count(format: LogSourceName) {
    this.parsed++
    this.byFormat[format] = (this.byFormat[format] ?? 0) + 1
  }

  private keyed(request: LogRequest | null, text: string | undefined, out: Array<LogRequest>) {
    if (request === null) return
    if (request.recordId !== null) return void out.push(request)
    out.push({ ...request, recordId: this.keys.next(text ?? fieldsText(request)) })
  }

  /** One JSON value (an array element or a line's object); `text` its raw line when there is one. */
  value(v: unknown, out: Array<LogRequest>, text?: string): void {
    this.scanned++
    const format = this.format
    if (!isObject(v)) {
      // A JSON value that is not a record: seen, not a request (as Vercel's reading counts it).
      if (format === "auto" || format === "vercel") this.parsed++
      return
    }
    const name = format === "auto" ? detectJson(v) : format
    const source = LOG_SOURCES[name]
    // A JSON record given to a text format is not a record of it.
    if (source.json === undefined) return
    const request = source.json.decode(v, this.receivedAt)
    if (request === undefined) return
    this.count(name)
    if (source.contentKeys) return this.keyed(request, text, out)
    if (request !== null) out.push(request)
  }

  /** One line of a body or file, as read (line end removed or not). */
  line(input: string, out: Array<LogRequest>): void {
    if (input.length > MAX_LINE) {
      this.scanned++
      return
    }
    let line = input.trim()
    if (line === "" || line === "[" || line === "]") return
    const first = line.charCodeAt(0)
    if (first === 0x23 /* # */) {
      // W3C header lines (CloudFront): #Version, #Fields, comments. Not records.
      const columns = fieldsHeader(line)
      if (columns !== null) this.columns = columns
      return
    }
    if (first === 0x7b /* { */ || first === 0x5b /* [ */) {
      if (line.endsWith(",")) line = line.slice(0, -1)
      let v: unknown
      try {
        v = JSON.parse(line)
      } catch {
        this.scanned++
        return
      }
      if (Array.isArray(v)) {
        for (const e of v) this.value(e, out)
      } else {
        this.value(v, out, line)
      }
      return
    }
    this.scanned++
    const format = this.format
    for (const name of this.textOrder) {
      const source = LOG_SOURCES[name].text
      // A text line given to a JSON format is not a record of it.
      if (source === undefined || (format === "auto" && !source.detect(line, this.columns))) continue
      const result = source.decode(line, this.columns, this.receivedAt)
      if (result.parsed) {
        this.count(name)
        return this.keyed(result.request, line, out)
      }
    }
  }

  /**
   * A whole body's text: one JSON document (an array's elements, or one object) when it parses
   * as one, else line by line. `partialTail` drops a last line without its line end (the body was
   * cut short: that record is not whole).
   */
  text(text: string, out: Array<LogRequest>, partialTail = false): void {
    let start = 0
    while (start < text.length && text.charCodeAt(start) <= 32) start++
    if (start === text.length) return
    const first = text.charCodeAt(start)
    if (!partialTail && (first === 0x5b || first === 0x7b)) {
      let whole: unknown
      let ok = true
      try {
        whole = JSON.parse(text)
      } catch {
        ok = false
      }
      if (ok) {
        if (Array.isArray(whole)) {
          for (const v of whole) this.value(v, out)
        } else {
          this.value(whole, out)
        }
        return
      }
    }
    let end = text.length
    if (partialTail) {
      const lastNl = text.lastIndexOf("\n")
      end = lastNl === -1 ? 0 : lastNl
    }
    let from = start
    while (from < end) {
      let to = text.indexOf("\n", from)
      if (to === -1 || to > end) to = end
      this.line(text.slice(from, to), out)
      from = to + 1
    }
  }
}
