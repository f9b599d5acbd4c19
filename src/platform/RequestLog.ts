import { Context, Effect, Layer } from "effect"

/**
 * The request log: one JSON line per request, buffered and written to stdout in batches (every
 * 100 ms, at 64 KiB, at shutdown and at exit): a write per request cost about a sixth of GET
 * /brands' throughput (bench/brands-rps.ts). The exit hook belongs to the Layer, not to the import.
 */
export class RequestLogBuffer {
  private pending: Array<string> = []
  private pendingBytes = 0
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(private readonly out: (text: string) => void) {}

  readonly flush = (): void => {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    if (this.pending.length === 0) return
    const text = this.pending.join("")
    this.pending = []
    this.pendingBytes = 0
    this.out(text)
  }

  write(line: string): void {
    this.pending.push(line + "\n")
    this.pendingBytes += line.length + 1
    if (this.pendingBytes >= 65_536) this.flush()
    else if (this.timer === undefined) {
      this.timer = setTimeout(this.flush, 100)
      this.timer.unref?.()
    }
  }
}

export class RequestLog extends Context.Tag("RequestLog")<RequestLog, RequestLogBuffer>() {}

let formattedAt = -1
let formatted = ""

/**
 * Now as a log line's timestamp (ISO 8601, UTC, milliseconds). Formatting a Date took some 2% of
 * GET /brands' CPU; at thousands of requests a second most fall in a millisecond already formatted.
 */
export const logTimestamp = (): string => {
  const at = Date.now()
  if (at !== formattedAt) {
    formattedAt = at
    formatted = new Date(at).toISOString()
  }
  return formatted
}

/** To stdout; flushed at exit while the Layer lives, and when it is released. */
export const RequestLogLive = Layer.scoped(
  RequestLog,
  Effect.acquireRelease(
    Effect.sync(() => {
      const log = new RequestLogBuffer((text) => void process.stdout.write(text))
      process.once("exit", log.flush)
      return log
    }),
    (log) =>
      Effect.sync(() => {
        process.off("exit", log.flush)
        log.flush()
      })
  )
)
