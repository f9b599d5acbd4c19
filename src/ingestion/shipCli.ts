import { SingleBar } from "cli-progress"
import { Effect, Schema } from "effect"
import { createReadStream, statSync } from "node:fs"
import { Readable } from "node:stream"
import { createGunzip } from "node:zlib"
import { loadCatalog, makeClassifier } from "../catalog/Classifier.js"
import { LogDecoder } from "./formats/index.js"
import { ContentKeys, isLogFormat, LOG_FORMATS, type LogFormat, MAX_LINE } from "./formats/common.js"
import { type LogRequest, referrerEngine } from "./Records.js"
import { isRecord } from "../platform/Guards.js"

/**
 * `bun run cli ship`: a client that sends log files to the batch endpoint (docs/ingestion.md,
 * "Ship log files"). It reads each file as a stream (gzip detected by its magic bytes), parses
 * it with the drain's decoders, and posts batches of at most 2,000 records, a few in flight; the
 * file is read only as fast as the batches are answered (backpressure), so memory stays flat
 * whatever the size. Every record carries an id derived from its content, so a second run
 * stores nothing twice. It never opens the database: a server URL and an API key are all it uses.
 */

export const SHIP_USAGE = `usage: bun run cli ship <file>... --site <site_id> --key <API key> [options]

  <file>          a log file, gzip or not; - reads standard input
  --site          the brand's site_id
  --key           an API key of the account (or AIV_API_KEY)
  --url           the server's base URL (default http://localhost:8080, or AIV_URL)
  --format        ${LOG_FORMATS.join(", ")} (default auto: detected line by line)
  --channel       the batch channel (default csv_upload)
  --batch         records per request, at most 2000 (default 2000)
  --concurrency   requests in flight (default 4)
  --all           send every request; by default only those this copy's crawler catalog recognises,
                  and visits referred by an answer engine (the server decides what is stored either way)
  --quiet         no progress output`

export const CAP_MESSAGE = "monthly server-log event cap reached"

export class ShipUsageError extends Schema.TaggedError<ShipUsageError>()("ShipUsageError", { message: Schema.String }) {}
export class ShipFailed extends Schema.TaggedError<ShipFailed>()("ShipFailed", { message: Schema.String }) {}
const usageError = (message: string) => new ShipUsageError({ message })

export interface ShipOptions {
  readonly files: ReadonlyArray<string>
  readonly site: string
  readonly key: string
  readonly url: string
  readonly format: LogFormat
  readonly channel: string
  readonly batchSize: number
  readonly concurrency: number
  readonly quiet: boolean
  /** Send every request with a User-Agent, not only the ones the local catalog picks out. */
  readonly all: boolean
}

export interface ShipIo {
  /** Standard input, for `-`. */
  readonly stdin: () => AsyncIterable<Uint8Array>
  readonly fetch: (url: string, init: RequestInit) => Promise<Response>
  /** Progress and the summary (stderr), and whether it is a terminal. */
  readonly err: NodeJS.WritableStream & { isTTY?: boolean }
  readonly out: (line: string) => void
  readonly sleep: (ms: number) => Promise<void>
  /** Backoff of retries: from this, doubling, to 30 s; at most `maxAttempts` tries a batch. */
  readonly retryBaseMs: number
  readonly maxAttempts: number
}

const flagValue = (args: ReadonlyArray<string>, i: number, name: string): string => {
  const v = args[i + 1]
  if (v === undefined || (v.startsWith("--") && v !== "-")) throw usageError(`${name} needs a value\n\n${SHIP_USAGE}`)
  return v
}

export const parseShipArgs = (args: ReadonlyArray<string>, env: Record<string, string | undefined>): ShipOptions => {
  const files: Array<string> = []
  let site = ""
  let key = env.AIV_API_KEY ?? ""
  let url = env.AIV_URL ?? "http://localhost:8080"
  let format = "auto"
  let channel = "csv_upload"
  let batchSize = 2000
  let concurrency = 4
  let quiet = false
  let all = false
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const eq = a.indexOf("=")
    const [name, inline] = a.startsWith("--") && eq !== -1 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined]
    const value = () => inline ?? flagValue(args, i++, name)
    switch (name) {
      case "--site": site = value(); break
      case "--key": key = value(); break
      case "--url": url = value(); break
      case "--format": format = value(); break
      case "--channel": channel = value(); break
      case "--batch": batchSize = Number(value()); break
      case "--concurrency": concurrency = Number(value()); break
      case "--quiet": quiet = true; break
      case "--all": all = true; break
      case "--help": throw usageError(SHIP_USAGE)
      default:
        if (a.startsWith("--")) throw usageError(`unknown option ${a}\n\n${SHIP_USAGE}`)
        files.push(a)
    }
  }
  if (files.length === 0) throw usageError(`no file given\n\n${SHIP_USAGE}`)
  if (site === "") throw usageError(`--site is required\n\n${SHIP_USAGE}`)
  if (key === "") throw usageError(`--key is required (or AIV_API_KEY)\n\n${SHIP_USAGE}`)
  if (!isLogFormat(format)) throw usageError(`unknown format "${format}": one of ${LOG_FORMATS.join(", ")}`)
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 2000) throw usageError("--batch must be 1..2000")
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 16) throw usageError("--concurrency must be 1..16")
  if (!/^https?:\/\//.test(url)) throw usageError(`--url must be an http(s) URL, not "${url}"`)
  return { files, site, key, url: url.replace(/\/+$/, ""), format, channel, batchSize, concurrency, quiet, all }
}

/** The wire form of a record (docs/ingestion.md plus the optional id and host); empty fields left out. */
const batchRecord = (r: LogRequest): Record<string, unknown> => {
  const out: Record<string, unknown> = { id: r.recordId, ua: r.ua, path: r.query === "" ? r.path : `${r.path}?${r.query}`, ts: r.ts, method: r.method }
  if (r.status !== null) out.status = r.status
  if (r.referrer !== "") out.ref = r.referrer
  if (r.clientIp !== null) out.ip = r.clientIp
  if (r.country !== null) out.country = r.country
  if (r.host !== "") out.host = r.host
  return out
}

/** The bytes of a source, inflated when it starts with the gzip magic bytes; `counted` sees the raw bytes. */
async function* inflateIfGzip(source: AsyncIterable<Uint8Array>, counted: (n: number) => void): AsyncGenerator<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]()
  let first = await iterator.next()
  while (!first.done && first.value.length < 2) {
    // A one-byte first chunk (stdin may deliver one): join it with the next to see the magic bytes.
    const next = await iterator.next()
    if (next.done) break
    const joined = new Uint8Array(first.value.length + next.value.length)
    joined.set(first.value)
    joined.set(next.value, first.value.length)
    first = { done: false, value: joined }
  }
  if (first.done) return
  const head = first.value
  async function* raw() {
    counted(head.length)
    yield head
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) {
      counted(r.value.length)
      yield r.value
    }
  }
  if (head[0] === 0x1f && head[1] === 0x8b) {
    const gunzip = Readable.from(raw(), { objectMode: false }).pipe(createGunzip({ chunkSize: 256 * 1024 }))
    for await (const chunk of gunzip) yield chunk as Uint8Array
  } else {
    yield* raw()
  }
}

interface Progress {
  bytesRead: number
  lines: number
}

export interface ShipSummary {
  scanned: number
  sent: number
  accepted: number
  skipped: number
  byFormat: Record<string, number>
  monthlyUsed: number | null
  monthlyCap: number | null
  seconds: number
  failures: Array<string>
}

class Stop {
  constructor(readonly message: string) {}
}

const fmtBytes = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : `${(n / 1e6).toFixed(1)} MB`)

export const runShip = async (options: ShipOptions, io: ShipIo): Promise<ShipSummary> => {
  const started = performance.now()
  const summary: ShipSummary = { scanned: 0, sent: 0, accepted: 0, skipped: 0, byFormat: {}, monthlyUsed: null, monthlyCap: null, seconds: 0, failures: [] }
  const endpoint = `${options.url}/api/public/v1/agents/ingest`
  let stopped: Stop | null = null

  const post = async (records: ReadonlyArray<LogRequest>): Promise<void> => {
    const body = JSON.stringify({ site_id: options.site, channel: options.channel, records: records.map(batchRecord) })
    for (let attempt = 1; ; attempt++) {
      if (stopped !== null) return
      let retryAfterMs = 0
      let reason: string
      try {
        const response = await io.fetch(endpoint, {
          method: "POST",
          headers: { authorization: `Bearer ${options.key}`, "content-type": "application/json" },
          body
        })
        const text = await response.text()
        let parsed: Record<string, unknown> = {}
        try {
          const v: unknown = JSON.parse(text)
          if (isRecord(v)) parsed = v
        } catch {
          // not JSON: reported by status below
        }
        const error = typeof parsed.error === "string" ? parsed.error : text.slice(0, 200)
        if (response.ok) {
          summary.sent += records.length
          summary.accepted += typeof parsed.accepted === "number" ? parsed.accepted : 0
          if (typeof parsed.monthly_used === "number") summary.monthlyUsed = Math.max(summary.monthlyUsed ?? 0, parsed.monthly_used)
          if (typeof parsed.monthly_cap === "number") summary.monthlyCap = parsed.monthly_cap
          return
        }
        if (response.status === 429 && error === CAP_MESSAGE) {
          throw new Stop(`stopped: the account's monthly cap is reached (${parsed.monthly_used}/${parsed.monthly_cap}); nothing more can be stored this month`)
        }
        if (response.status === 401 || response.status === 403) throw new Stop(`stopped: ${response.status} ${error} (check --key and --site)`)
        if (response.status !== 429 && response.status < 500) throw new Stop(`stopped: the server refused a batch: ${response.status} ${error}`)
        const retryAfter = Number(response.headers.get("retry-after"))
        if (Number.isFinite(retryAfter) && retryAfter > 0) retryAfterMs = Math.min(60_000, retryAfter * 1000)
        reason = `${response.status} ${error}`
      } catch (e) {
        if (e instanceof Stop) throw e
        reason = e instanceof Error ? e.message : String(e)
      }
      if (attempt >= io.maxAttempts) throw new Stop(`stopped: a batch failed ${attempt} times (last: ${reason})`)
      const backoff = Math.min(30_000, io.retryBaseMs * 2 ** (attempt - 1))
      await io.sleep(Math.max(retryAfterMs, backoff * (0.5 + Math.random() / 2)))
    }
  }

  // Batches in flight: at most `concurrency`; the reader waits for room (backpressure).
  const inFlight = new Set<Promise<void>>()
  const send = async (records: ReadonlyArray<LogRequest>) => {
    while (inFlight.size >= options.concurrency) await Promise.race(inFlight)
    if (stopped !== null) throw stopped
    const p: Promise<void> = post(records).catch((e) => {
      stopped ??= e instanceof Stop ? e : new Stop(`stopped: ${String(e)}`)
    }).finally(() => inFlight.delete(p))
    inFlight.add(p)
  }

  // Most lines of a log are people and search engines the server would skip: by default only the
  // requests this copy's catalog recognises (and AI referrals) are sent. A User-Agent repeats
  // across a log, so its answer is remembered (bounded).
  const classify = makeClassifier(loadCatalog().agents)
  const known = new Map<string, boolean>()
  const worthSending = (r: LogRequest): boolean => {
    if (r.ua === "") return false
    if (options.all) return true
    let crawler = known.get(r.ua)
    if (crawler === undefined) {
      crawler = classify(r.ua) !== null
      if (known.size >= 50_000) known.clear()
      known.set(r.ua, crawler)
    }
    return crawler || referrerEngine(r.referrer) !== null
  }

  const tty = io.err.isTTY === true && !options.quiet
  for (const file of options.files) {
    if (stopped !== null) break
    const progress: Progress = { bytesRead: 0, lines: 0 }
    const total = file === "-" ? 0 : (() => {
      try {
        return statSync(file).size
      } catch {
        return 0
      }
    })()
    const source: AsyncIterable<Uint8Array> = file === "-" ? io.stdin() : createReadStream(file, { highWaterMark: 128 * 1024 })
    const decoder = new LogDecoder(options.format, Date.now())
    const name = file === "-" ? "stdin" : file
    const bar = tty
      ? new SingleBar({
        stream: io.err,
        format: `${name.length > 30 ? "…" + name.slice(-29) : name} {bar} {percentage}% | {read} | {lines} lines | {rate} lines/s | ETA {eta_formatted}`,
        hideCursor: true,
        etaBuffer: 50,
        fps: 5
      })
      : null
    bar?.start(total > 0 ? total : 1, 0, { read: "0 MB", lines: 0, rate: 0 })
    const fileStart = performance.now()
    let lastPlain = fileStart
    const report = (final: boolean) => {
      const seconds = (performance.now() - fileStart) / 1000
      const rate = Math.round(progress.lines / Math.max(seconds, 0.001))
      if (bar !== null) {
        bar.update(total > 0 ? Math.min(progress.bytesRead, total) : 0, { read: fmtBytes(progress.bytesRead), lines: progress.lines, rate })
      } else if (!options.quiet && (final || performance.now() - lastPlain > 5000)) {
        lastPlain = performance.now()
        const pct = total > 0 ? ` (${Math.floor((100 * progress.bytesRead) / total)}%)` : ""
        io.err.write(`ship: ${name}: ${fmtBytes(progress.bytesRead)}${pct} read, ${progress.lines} lines, ${rate} lines/s\n`)
      }
    }

    let pending: Array<LogRequest> = []
    let rest = ""
    let overlong = false
    let chunks = 0
    const utf8 = new TextDecoder("utf-8")
    const lineKeys = new ContentKeys()
    const takeLine = (line: string) => {
      progress.lines++
      const before = pending.length
      decoder.line(line, pending)
      for (let i = pending.length - 1; i >= before; i--) {
        const r = pending[i]!
        if (!worthSending(r)) pending.splice(i, 1)
        // A Vercel record without an id: keyed by its line, like every other record without one.
        else if (r.recordId === null) pending[i] = { ...r, recordId: lineKeys.next(line) }
      }
    }
    const flush = async (all: boolean) => {
      while (pending.length >= options.batchSize || (all && pending.length > 0)) {
        const batch = pending.length > options.batchSize ? pending.slice(0, options.batchSize) : pending
        pending = pending.length > options.batchSize ? pending.slice(options.batchSize) : []
        if (batch.length > 0) await send(batch)
      }
    }
    try {
      for await (const chunk of inflateIfGzip(source, (n) => (progress.bytesRead += n))) {
        const text = rest + utf8.decode(chunk, { stream: true })
        let from = 0
        for (let nl = text.indexOf("\n", from); nl !== -1; nl = text.indexOf("\n", from)) {
          if (overlong) overlong = false
          else takeLine(text.slice(from, nl))
          from = nl + 1
        }
        rest = text.slice(from)
        if (rest.length > MAX_LINE) {
          // A line longer than any record: counted once (scanned, skipped), not kept in memory.
          if (!overlong) {
            progress.lines++
            decoder.scanned++
          }
          overlong = true
          rest = ""
        }
        await flush(false)
        // The garbage of a stream (chunk strings, request bodies) is mostly outside the JavaScript
        // heap, so the collector does not feel its pressure: without a collection every few MB the
        // process grew to 3x its size on a 200 MB file; with it, memory stays flat at any size.
        if (++chunks % 16 === 0) Bun.gc(true)
        report(false)
        if (stopped !== null) break
      }
      const tail = rest + utf8.decode()
      if (!overlong && tail.trim() !== "") takeLine(tail)
      await flush(true)
    } catch (e) {
      if (e instanceof Stop) stopped ??= e
      else {
        // A cut or corrupt gzip, an unreadable file: what was read before is sent, the file is reported.
        const why = e instanceof Error ? e.message : String(e)
        summary.failures.push(`${name}: ${why} (after ${progress.lines} lines; those were sent)`)
        await flush(true).catch(() => undefined)
      }
    }
    while (inFlight.size > 0) await Promise.race(inFlight)
    report(true)
    bar?.stop()
    summary.scanned += decoder.scanned
    for (const [format, n] of Object.entries(decoder.byFormat)) summary.byFormat[format] = (summary.byFormat[format] ?? 0) + (n ?? 0)
  }
  while (inFlight.size > 0) await Promise.race(inFlight)
  summary.skipped = summary.scanned - summary.accepted
  summary.seconds = (performance.now() - started) / 1000
  if (stopped !== null) summary.failures.push(stopped.message)
  return summary
}

export const formatSummary = (s: ShipSummary): string => {
  const formats = Object.entries(s.byFormat).map(([f, n]) => `${f} ${n}`).join(", ") || "none"
  const cap = s.monthlyCap !== null ? `, monthly ${s.monthlyUsed}/${s.monthlyCap}` : ""
  return `shipped: scanned ${s.scanned}, accepted ${s.accepted}, skipped ${s.skipped} (by format: ${formats})` +
    `${cap}; ${s.seconds.toFixed(1)} s, ${Math.round(s.scanned / Math.max(s.seconds, 0.001))} lines/s, ` +
    `peak memory ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`
}

export const processIo = (): ShipIo => ({
  stdin: () => process.stdin,
  fetch: (url, init) => fetch(url, init),
  err: process.stderr,
  out: (line) => console.log(line),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  retryBaseMs: 500,
  maxAttempts: 8
})

/** The command: usage errors as ShipUsageError, a stop (key, cap, broken file) as ShipFailed after the summary. */
export const shipCommand = (args: ReadonlyArray<string>, io: ShipIo = processIo()): Effect.Effect<void, ShipUsageError | ShipFailed> =>
  Effect.gen(function*() {
    const options = yield* Effect.try({
      try: () => parseShipArgs(args, process.env),
      catch: (e) => (e instanceof ShipUsageError ? e : usageError(String(e)))
    })
    const summary = yield* Effect.promise(() => runShip(options, io))
    io.out(formatSummary(summary))
    if (summary.failures.length > 0) return yield* Effect.fail(new ShipFailed({ message: summary.failures.join("\n") }))
  })
