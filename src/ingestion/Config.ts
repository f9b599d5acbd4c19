import { Config, Context, Effect, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AppConfig } from "../platform/Config.js"

/** Limits and the spool of ingestion, read once from the environment (docs/ingestion.md). */
export interface IngestionConfigShape {
  /** Largest request body (as sent, compressed or not) read by the drain; larger ones are unparseable. */
  readonly maxBodyBytes: number
  /** Largest body after gunzip; a body inflating past it (a gzip bomb) is unparseable. */
  readonly maxInflatedBytes: number
  /** Where deliveries that could not be persisted wait for the database (one file each). */
  readonly spoolDir: string
  /** Backoff of the spool replay while the database stays down: from min to max, doubling. */
  readonly spoolRetryMinMs: number
  readonly spoolRetryMaxMs: number
  /** How often the replay looks for spool files it was not told about (left by a previous process). */
  readonly spoolPollMs: number
  /** Fastly service ids allowed to log here (the logging challenge); empty means any service (`*`). */
  readonly fastlyServiceIds: ReadonlyArray<string>
}

export class IngestionConfig extends Context.Tag("IngestionConfig")<IngestionConfig, IngestionConfigShape>() {}

export const INGEST_DEFAULTS = {
  maxBodyBytes: 16 * 1024 * 1024,
  maxInflatedBytes: 64 * 1024 * 1024,
  spoolRetryMinMs: 250,
  spoolRetryMaxMs: 30_000,
  spoolPollMs: 5_000,
  fastlyServiceIds: [] as ReadonlyArray<string>
} as const

/** DATA_DIR "memory://" (tests, throwaway runs) has no directory: the spool then lives in a fresh temp dir. */
const defaultSpoolDir = (dataDir: string) =>
  dataDir === "memory://" ? mkdtempSync(join(tmpdir(), "aiv-spool-")) : join(dataDir, "spool")

export const IngestionConfigLive = Layer.effect(
  IngestionConfig,
  Effect.gen(function*() {
    const app = yield* AppConfig
    const env = yield* Config.all({
      maxBodyBytes: Config.integer("INGEST_MAX_BODY_BYTES").pipe(Config.withDefault(INGEST_DEFAULTS.maxBodyBytes)),
      maxInflatedBytes: Config.integer("INGEST_MAX_INFLATED_BYTES").pipe(Config.withDefault(INGEST_DEFAULTS.maxInflatedBytes)),
      spoolDir: Config.option(Config.string("SPOOL_DIR")),
      spoolRetryMinMs: Config.integer("SPOOL_RETRY_MIN_MS").pipe(Config.withDefault(INGEST_DEFAULTS.spoolRetryMinMs)),
      spoolRetryMaxMs: Config.integer("SPOOL_RETRY_MAX_MS").pipe(Config.withDefault(INGEST_DEFAULTS.spoolRetryMaxMs)),
      spoolPollMs: Config.integer("SPOOL_POLL_MS").pipe(Config.withDefault(INGEST_DEFAULTS.spoolPollMs)),
      fastlyServiceIds: Config.string("FASTLY_SERVICE_IDS").pipe(
        Config.withDefault(""),
        Config.map((s) => s.split(",").map((id) => id.trim()).filter((id) => id !== ""))
      )
    }).pipe(Effect.orDie)
    return {
      ...env,
      spoolDir: env.spoolDir._tag === "Some" && env.spoolDir.value.trim() !== "" ? env.spoolDir.value : defaultSpoolDir(app.dataDir)
    }
  })
)

/** For tests: the defaults, a fresh temp spool, and any overrides. */
export const ingestionConfigTest = (overrides: Partial<IngestionConfigShape> = {}) =>
  Layer.sync(IngestionConfig, () => ({
    ...INGEST_DEFAULTS,
    spoolDir: overrides.spoolDir ?? mkdtempSync(join(tmpdir(), "aiv-spool-")),
    ...overrides
  }))
