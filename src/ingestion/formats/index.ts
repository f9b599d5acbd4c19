import { fromDrainRecord, type LogRequest } from "../Records.js"
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
import { ContentKeys, isObject, type JsonObject, type LogFormat, MAX_LINE } from "./common.js"
import { fromFastly, isFastly } from "./fastly.js"
import { fromNetlify, isNetlify } from "./netlify.js"

export { isLogFormat, LOG_FORMATS, type LogFormat } from "./common.js"

/** The text a record without an id is keyed by when it has no line of its own: what was read from it. */
const fieldsText = (r: LogRequest): string =>
  `${r.ts}\t${r.method}\t${r.host}\t${r.path}\t${r.query}\t${r.status}\t${r.clientIp}\t${r.country}\t${r.referrer}\t${r.ua}`

/**
 * The log sources behind one decoder (docs/ingestion.md, "Log sources"): a stream of lines or
 * JSON values in, requests out, with the counts the drain answers. `auto` tells the formats
 * apart record by record: JSON records by their field names, text lines by their shape (a
 * `#Fields:` header or a tab-separated line starting with a date: CloudFront; `IP - user [time]
 * "request" status ...`: combined). A forced format reads only its own records.
 *
 * Every request gets a record id: the platform's (RayID, reqId, request_id, x-edge-request-id)
 * or, when it has none, the content key of its text (ContentKeys): the line as read, or, for an
 * element of a JSON array (no line of its own), the fields read from it. Never the element
 * re-serialised: a value nested 200,000 deep would overflow the stack, and the fields are all the
 * record says. The Vercel format keeps its own rule (its `id`, else the delivery's key), as before.
 */
export class LogDecoder {
  /** Records seen: JSON values, and non-empty lines that are not header or comment lines. */
  scanned = 0
  /** Records that parsed as a record of some format (requests or not). */
  parsed = 0
  /** Scanned records per format they parsed as (requests or not). */
  readonly byFormat: Partial<Record<Exclude<LogFormat, "auto">, number>> = {}
  private columns: CloudFrontColumns | null = null
  private readonly keys = new ContentKeys()

  constructor(readonly format: LogFormat, readonly receivedAt: number) {}

  private count(format: Exclude<LogFormat, "auto">) {
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
      // A JSON value that is not a record: seen, not a request (as the Vercel drain always did).
      if (format === "auto" || format === "vercel") this.parsed++
      return
    }
    const r: JsonObject = v
    const pick = format !== "auto"
      ? format
      : isCloudflare(r) ? "cloudflare" : isAkamai(r) ? "akamai" : isNetlify(r) ? "netlify" : isFastly(r) ? "fastly"
      : isCloudFrontJson(r) ? "cloudfront" : "vercel"
    switch (pick) {
      case "vercel": {
        this.count("vercel")
        const request = fromDrainRecord(r, this.receivedAt)
        if (request !== null) out.push(request)
        return
      }
      case "cloudflare":
        this.count(pick)
        return this.keyed(fromCloudflare(r, this.receivedAt), text, out)
      case "akamai":
        this.count(pick)
        return this.keyed(fromAkamai(r, this.receivedAt), text, out)
      case "netlify":
        this.count(pick)
        return this.keyed(fromNetlify(r, this.receivedAt), text, out)
      case "fastly":
        this.count(pick)
        return this.keyed(fromFastly(r, this.receivedAt), text, out)
      case "cloudfront":
        // Standard logging v2 delivers JSON records with the W3C field names; other JSON is not CloudFront's.
        if (!isCloudFrontJson(r)) return
        this.count(pick)
        return this.keyed(fromCloudFrontJson(r, this.receivedAt), text, out)
      default:
        // A JSON record given to a text format: not a record of it.
        return
    }
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
    if (format === "cloudfront" || (format === "auto" && (this.columns !== null || looksCloudFront(line)))) {
      const result = fromCloudFrontLine(line, this.columns ?? DEFAULT_COLUMNS, this.receivedAt)
      if (result.parsed) {
        this.count("cloudfront")
        return this.keyed(result.request, line, out)
      }
      if (format === "cloudfront") return
    }
    if (format === "combined" || format === "auto") {
      const result = fromCombinedLine(line, this.receivedAt)
      if (result.parsed) {
        this.count("combined")
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
