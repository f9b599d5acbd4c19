import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Schedule, Schema } from "effect"
import { now } from "./Time.js"

/**
 * Time partitions of the high-volume tables (docs/scale.md). A table registered in time_partitioned
 * (migrations/0014) is range-partitioned on its time column by week or month, with a default
 * partition for a row outside every range. This service keeps `ahead` periods created beyond the
 * current one, and drops whole partitions once their period is past a horizon: retention is a
 * DETACH and a DROP of a table, not a DELETE of its rows. The SQL functions do the DDL under an
 * advisory lock, so several processes may run this at once.
 */
export interface PartitionInfo {
  readonly name: string
  /** Inclusive start of the range (UTC), null for the default partition. */
  readonly from: Date | null
  /** Exclusive end of the range, null for the default partition. */
  readonly to: Date | null
}

export interface TimePartitionsShape {
  /** Creates the missing partitions from the current period (the Clock's) through `ahead` periods; returns how many. */
  readonly ensureAhead: Effect.Effect<number>
  /** Creates the missing partitions of the periods from `from` to `to` of `table`; returns how many. */
  readonly ensure: (table: string, from: Date, to: Date) => Effect.Effect<number>
  /** Detaches and drops the partitions of `table` whose whole period ends at or before `before`; returns how many. */
  readonly dropBefore: (table: string, before: Date) => Effect.Effect<number>
  /** The partitions of `table`, oldest first (the default one last). */
  readonly list: (table: string) => Effect.Effect<ReadonlyArray<PartitionInfo>>
}

export class TimePartitions extends Context.Tag("TimePartitions")<TimePartitions, TimePartitionsShape>() {}

const PartitionRow = Schema.Struct({
  name: Schema.String,
  from: Schema.NullOr(Schema.String),
  to: Schema.NullOr(Schema.String)
})
const CountRow = Schema.Struct({ n: Schema.Number })

const toDate = (iso: string | null) => (iso === null ? null : new Date(iso))

export const TimePartitionsLive = Layer.effect(
  TimePartitions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const count = (rows: ReadonlyArray<unknown>) =>
      Schema.decodeUnknown(Schema.Array(CountRow))(rows).pipe(Effect.map((decoded) => decoded.reduce((sum, row) => sum + row.n, 0)))

    const service: TimePartitionsShape = {
      ensureAhead: Effect.gen(function*() {
        const at = (yield* now).toISOString()
        const rows = yield* sql`
          select time_partitions_ensure(parent, ${at}::timestamptz,
                                        ${at}::timestamptz + make_interval(weeks => case when period = 'week' then ahead else 0 end,
                                                                           months => case when period = 'month' then ahead else 0 end))::int as n
          from time_partitioned order by parent`.pipe(sql.withTransaction)
        return yield* count(rows)
      }).pipe(Effect.orDie),

      ensure: (table, from, to) =>
        sql`select time_partitions_ensure(${table}, ${from.toISOString()}::timestamptz, ${to.toISOString()}::timestamptz)::int as n`.pipe(
          sql.withTransaction,
          Effect.flatMap(count),
          Effect.orDie
        ),

      dropBefore: (table, before) =>
        sql`select time_partitions_drop_before(${table}, ${before.toISOString()}::timestamptz)::int as n`.pipe(
          sql.withTransaction,
          Effect.flatMap(count),
          Effect.orDie
        ),

      list: (table) =>
        sql`
          select c.relname as name,
                 to_char(to_date(substring(c.relname from '_p([0-9]{8})$'), 'YYYYMMDD'), 'YYYY-MM-DD"T00:00:00Z"') as "from",
                 to_char(to_date(substring(c.relname from '_p([0-9]{8})$'), 'YYYYMMDD')
                         + ('1 ' || (select period from time_partitioned where parent = ${table}))::interval,
                         'YYYY-MM-DD"T00:00:00Z"') as "to"
          from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = to_regclass(${table})
          order by c.relname ~ '_default$', c.relname`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(PartitionRow))),
          Effect.map((rows) => rows.map((row) => ({ name: row.name, from: toDate(row.from), to: toDate(row.to) }))),
          Effect.orDie
        )
    }
    return service
  })
)

/** How often the service makes sure the partitions ahead exist (each week's is made weeks before it is needed). */
export const PARTITIONS_EVERY_MS = 6 * 3_600_000

/**
 * The partitions ahead, made at start-up and every PARTITIONS_EVERY_MS on the Clock: no external
 * cron. A failed round is logged and tried again at the next (the partitions ahead leave weeks of slack,
 * and a row with no partition lands in the default one meanwhile).
 */
export const PartitionMaintenanceLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const partitions = yield* TimePartitions
    const round = partitions.ensureAhead.pipe(
      Effect.tap((created) => (created > 0 ? Effect.logInfo(`time partitions: created ${created}`) : Effect.void)),
      Effect.catchAllCause((cause) => Effect.logWarning("time partitions: round failed", cause))
    )
    yield* round
    yield* Effect.forkScoped(Effect.repeat(Effect.sleep(PARTITIONS_EVERY_MS).pipe(Effect.zipRight(round)), Schedule.forever))
  })
)
