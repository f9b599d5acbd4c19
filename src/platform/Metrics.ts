/**
 * The process's metrics, rendered for GET /metrics in the Prometheus text format (0.0.4).
 * One registry per process, like a Prometheus client's default registry: counters are plain
 * numbers bumped on the hot path (no allocation once a series exists); gauges that cost work
 * (spool depth, pool usage) are read at scrape time.
 */

export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

interface RequestSeries {
  readonly method: string
  readonly route: string
  readonly status: number
  count: number
  sum: number
  readonly buckets: Array<number>
}

interface IngestSeries {
  scanned: number
  accepted: number
  skipped: number
  requests: number
}

export type IngestSource = "drain" | "batch" | "replay" | "collect"

/** A Prometheus label value: backslash, double quote and newline escaped. */
const label = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

export class MetricsRegistry {
  private readonly requests = new Map<string, RequestSeries>()
  private readonly ingest = new Map<IngestSource, IngestSeries>()
  rateLimited = 0
  rateLimitStoreErrors = 0
  inFlight = 0
  readonly startedAt = Date.now()

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const id = method + " " + route + " " + status
    let series = this.requests.get(id)
    if (series === undefined) {
      series = { method, route, status, count: 0, sum: 0, buckets: new Array(LATENCY_BUCKETS.length).fill(0) }
      this.requests.set(id, series)
    }
    series.count++
    series.sum += seconds
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= LATENCY_BUCKETS[i]!) {
        series.buckets[i]!++
        break
      }
    }
  }

  /** Records of one ingestion request (or one replayed spool file). */
  observeIngest(source: IngestSource, result: { readonly scanned?: number; readonly accepted: number; readonly skipped?: number }): void {
    let series = this.ingest.get(source)
    if (series === undefined) {
      series = { scanned: 0, accepted: 0, skipped: 0, requests: 0 }
      this.ingest.set(source, series)
    }
    series.requests++
    series.accepted += result.accepted
    series.scanned += result.scanned ?? result.accepted
    series.skipped += result.skipped ?? 0
  }

  requestCount(route: string, status?: number): number {
    let total = 0
    for (const s of this.requests.values()) if (s.route === route && (status === undefined || s.status === status)) total += s.count
    return total
  }

  render(gauges: ReadonlyArray<{ readonly name: string; readonly help: string; readonly value: number; readonly labels?: Record<string, string> }>): string {
    const out: Array<string> = []
    out.push("# HELP aiv_http_requests_total HTTP requests answered, by method, route template and status.")
    out.push("# TYPE aiv_http_requests_total counter")
    for (const s of this.requests.values()) {
      out.push(`aiv_http_requests_total{method="${s.method}",route="${label(s.route)}",status="${s.status}"} ${s.count}`)
    }
    out.push("# HELP aiv_http_request_duration_seconds Time from the request reaching the app to its response head.")
    out.push("# TYPE aiv_http_request_duration_seconds histogram")
    for (const s of this.requests.values()) {
      const labels = `method="${s.method}",route="${label(s.route)}",status="${s.status}"`
      let cumulative = 0
      for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
        cumulative += s.buckets[i]!
        out.push(`aiv_http_request_duration_seconds_bucket{${labels},le="${LATENCY_BUCKETS[i]}"} ${cumulative}`)
      }
      out.push(`aiv_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`)
      out.push(`aiv_http_request_duration_seconds_sum{${labels}} ${s.sum}`)
      out.push(`aiv_http_request_duration_seconds_count{${labels}} ${s.count}`)
    }
    const ingestCounter = (name: string, help: string, pick: (s: IngestSeries) => number) => {
      out.push(`# HELP ${name} ${help}`)
      out.push(`# TYPE ${name} counter`)
      for (const [source, s] of this.ingest) out.push(`${name}{source="${source}"} ${pick(s)}`)
    }
    ingestCounter("aiv_ingest_records_scanned_total", "Server-log records read (drain: JSON values; batch: records).", (s) => s.scanned)
    ingestCounter("aiv_ingest_records_accepted_total", "Crawler hits newly stored.", (s) => s.accepted)
    ingestCounter("aiv_ingest_records_skipped_total", "Records that were not AI-crawler requests.", (s) => s.skipped)
    ingestCounter("aiv_ingest_requests_total", "Ingestion requests answered 200 (and spool files replayed).", (s) => s.requests)
    out.push("# HELP aiv_rate_limited_total Requests refused with 429 by a rate limit or a bound on reads in flight.")
    out.push("# TYPE aiv_rate_limited_total counter")
    out.push(`aiv_rate_limited_total ${this.rateLimited}`)
    out.push("# HELP aiv_rate_limit_store_errors_total Rate-limit checks let through because Redis did not answer.")
    out.push("# TYPE aiv_rate_limit_store_errors_total counter")
    out.push(`aiv_rate_limit_store_errors_total ${this.rateLimitStoreErrors}`)
    out.push("# HELP aiv_http_requests_in_flight Requests being served now.")
    out.push("# TYPE aiv_http_requests_in_flight gauge")
    out.push(`aiv_http_requests_in_flight ${this.inFlight}`)
    const memory = process.memoryUsage()
    const all = [
      ...gauges,
      { name: "process_resident_memory_bytes", help: "Resident set size.", value: memory.rss },
      { name: "process_heap_used_bytes", help: "JavaScript heap in use.", value: memory.heapUsed },
      { name: "process_uptime_seconds", help: "Seconds since the process started serving.", value: (Date.now() - this.startedAt) / 1000 }
    ]
    const seen = new Set<string>()
    for (const g of all) {
      if (!seen.has(g.name)) {
        seen.add(g.name)
        out.push(`# HELP ${g.name} ${g.help}`)
        out.push(`# TYPE ${g.name} gauge`)
      }
      const labels = g.labels ? `{${Object.entries(g.labels).map(([k, v]) => `${k}="${label(v)}"`).join(",")}}` : ""
      out.push(`${g.name}${labels} ${g.value}`)
    }
    return out.join("\n") + "\n"
  }
}

/** The registry of this process. */
export const metrics = new MetricsRegistry()
