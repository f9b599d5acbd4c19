import { Effect } from "effect"
import { AppConfig } from "../platform/Config.js"
import type { ReadinessCheck } from "../platform/Readiness.js"
import { Spool } from "./Spool.js"

/**
 * Ingestion's part of GET /readyz and GET /metrics: the drain spool's depth. Past READY_SPOOL_MAX
 * files the database has been away too long for this process to take more drains.
 */
export const spoolReadiness: Effect.Effect<ReadinessCheck, never, Spool | AppConfig> = Effect.gen(function*() {
  const spool = yield* Spool
  const config = yield* AppConfig
  return {
    name: "spool",
    report: Effect.map(spool.pending, (files) => {
      const depth = files.length
      return {
        status: depth <= config.readySpoolMax ? "ok" : `overflowing (${depth} files, at most ${config.readySpoolMax})`,
        fields: { spool_depth: depth },
        gauges: [{ name: "aiv_spool_depth", help: "Drain deliveries waiting in the spool for the database.", value: depth }]
      }
    })
  }
})
