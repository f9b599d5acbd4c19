import { Context, type Effect } from "effect"

/**
 * What a domain adds to GET /readyz and GET /metrics (src/app/OpsRoutes.ts) without the platform
 * knowing the domain: ingestion contributes its spool. The process is ready when every check says "ok".
 */
export interface ReadinessReport {
  /** "ok", or why not (e.g. "overflowing (12 files, at most 10)"). */
  readonly status: string
  /** Figures shown at the top level of the /readyz body (e.g. spool_depth). */
  readonly fields: Readonly<Record<string, number>>
  /** Gauges for /metrics. */
  readonly gauges: ReadonlyArray<Gauge>
}

export interface Gauge {
  readonly name: string
  readonly help: string
  readonly value: number
  readonly labels?: Record<string, string>
}

export interface ReadinessCheck {
  /** Its key under `checks` in the /readyz body. */
  readonly name: string
  readonly report: Effect.Effect<ReadinessReport>
}

export class ReadinessChecks extends Context.Tag("ReadinessChecks")<ReadinessChecks, ReadonlyArray<ReadinessCheck>>() {}
