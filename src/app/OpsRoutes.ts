import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted, Schema } from "effect"
import { readdirSync } from "node:fs"
import { bearerToken } from "../platform/Bearer.js"
import { AppConfig } from "../platform/Config.js"
import { secretEquals } from "../platform/Digest.js"
import { Lifecycle } from "../platform/Lifecycle.js"
import { metrics } from "../platform/Metrics.js"
import { migrationsDir } from "../platform/Migrations.js"
import { ReadinessChecks } from "../platform/Readiness.js"
import { firstRow } from "../platform/Rows.js"
import { Database } from "../platform/Sql.js"

/**
 * The operational routes (docs/operations.md): GET /readyz (the database reachable, migrations
 * applied, not draining, and every check a domain contributes, such as the drain spool) and
 * GET /metrics (Prometheus text; behind METRICS_TOKEN when it is set).
 */

/** The highest migration number shipped with this build (migrations/NNNN_name.sql). */
const latestMigration = (): number => {
  try {
    return Math.max(0, ...readdirSync(migrationsDir).map((file) => Number(/^(\d+)_.+\.sql$/.exec(file)?.[1] ?? 0)))
  } catch {
    return 0
  }
}


const MigrationRow = Schema.Struct({ id: Schema.NullOr(Schema.Number) })
export const OpsRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const database = yield* Database
    const lifecycle = yield* Lifecycle
    const contributed = yield* ReadinessChecks
    const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
    const latest = latestMigration()

    /** The newest applied migration (null: no SQL client, as with the in-memory fakes); fails when unreachable. */
    const appliedMigration: Effect.Effect<number | null, unknown> = Option.match(sql, {
      onNone: () => Effect.as(database.ping, null),
      onSome: (sql) =>
        sql`select max(migration_id)::int as id from schema_migrations`.pipe(
          firstRow(MigrationRow),
          Effect.map((row) => Option.match(row, { onNone: () => 0, onSome: (r) => r.id ?? 0 }))
        )
    })
    const reports = Effect.all(contributed.map((check) => check.report), { concurrency: "unbounded" })

    yield* router.get(
      "/readyz",
      Effect.gen(function*() {
        const [applied, reported] = yield* Effect.all([
          appliedMigration.pipe(Effect.timeout("2 seconds"), Effect.option),
          reports
        ], { concurrency: "unbounded" })
        const reachable = Option.isSome(applied)
        const checks: Record<string, string> = {
          database: reachable ? "ok" : "unreachable",
          migrations: !reachable
            ? "unknown"
            : applied.value === null || applied.value >= latest
            ? "ok"
            : `pending (${applied.value} of ${latest})`
        }
        const fields: Record<string, number> = {}
        reported.forEach((report, i) => {
          checks[contributed[i]!.name] = report.status
          Object.assign(fields, report.fields)
        })
        checks["shutdown"] = lifecycle.draining ? "draining" : "ok"
        const ready = Object.values(checks).every((value) => value === "ok")
        return ready
          ? HttpServerResponse.unsafeJson({ status: "ready", database: database.kind, ...fields, checks })
          : HttpServerResponse.unsafeJson({ error: "not ready", ...fields, checks }, { status: 503 })
      })
    )

    yield* router.get(
      "/metrics",
      Effect.gen(function*() {
        if (Option.isSome(config.metricsToken)) {
          const request = yield* HttpServerRequest.HttpServerRequest
          const token = bearerToken(request.headers["authorization"]) ?? ""
          if (!secretEquals(token, Redacted.value(config.metricsToken.value))) {
            return HttpServerResponse.unsafeJson({ error: "invalid metrics token" }, { status: 401 })
          }
        }
        const reported = yield* reports
        const pool = database.poolStats?.()
        const gauges = [
          ...reported.flatMap((report) => report.gauges),
          { name: "aiv_shutting_down", help: "1 while the process drains at shutdown.", value: lifecycle.draining ? 1 : 0 },
          ...(pool === undefined ? [] : [
            { name: "aiv_db_pool_connections", help: "Database pool connections by state.", value: pool.total - pool.idle, labels: { state: "busy" } },
            { name: "aiv_db_pool_connections", help: "", value: pool.idle, labels: { state: "idle" } },
            { name: "aiv_db_pool_max", help: "Largest number of pool connections.", value: pool.max },
            { name: "aiv_db_pool_waiting", help: "Queries waiting for a pool connection.", value: pool.waiting }
          ])
        ]
        return HttpServerResponse.text(metrics.render(gauges), { contentType: "text/plain; version=0.0.4; charset=utf-8" })
      })
    )
  })
)
