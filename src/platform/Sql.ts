import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { Context, Duration, Effect, Layer, Option, Redacted, Schema, Stream } from "effect"
import { mkdirSync } from "node:fs"
import * as Pg from "pg"
import { AppConfig } from "./Config.js"
import { acquireDataDirLock, dataDirHolder } from "./DataDirLock.js"
import { channelPath, connectChannel, type EmbeddedSession, type Reply, serveChannel } from "./EmbeddedChannel.js"
import { rows } from "./Rows.js"

/**
 * What services need of the database beyond their repositories: which back end runs,
 * a liveness probe, and LISTEN/NOTIFY for cross-process cache invalidation.
 */

const PeerRow = Schema.Struct({ id: Schema.String })

/**
 * The first element of every `listen` stream: the LISTEN is in place, so every notification committed
 * from now on arrives (a subscriber that may have missed some re-reads what they would have told it).
 */
export const Listening: unique symbol = Symbol.for("ai-visibility/Listening")
export type Listening = typeof Listening

export interface DatabaseShape {
  readonly kind: "pg" | "pglite" | "memory"
  /**
   * `Listening` once subscribed, then the channel's payloads in commit order. The stream fails when the
   * connection that listens is lost (a terminated backend, a restart, a failover): the subscriber
   * listens again and re-reads what it may have missed.
   */
  readonly listen: (channel: string) => Stream.Stream<string | Listening, SqlError>
  /**
   * Gives up the listening connection (every `listen` stream fails, and listens again on a new one):
   * for a subscriber whose heartbeat stopped coming back through a connection that looks open.
   */
  readonly relisten: () => void
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, SqlError>
  /** Succeeds once the database answers and the migrations table exists. */
  readonly ping: Effect.Effect<void, SqlError>
  /**
   * The other processes of the application listening on this database: each one's connections carry
   * its instance id (application_name `ai-visibility/<id>`), and it runs every LISTEN of its channels
   * on one connection of its own, whose last statement is therefore a LISTEN while it listens (which
   * channel subscribed last depends on start-up order). Empty on the embedded database (one process
   * owns it) and in memory.
   */
  readonly peers: () => Effect.Effect<ReadonlyArray<string>, SqlError>
  /** This process's instance id (see peers). */
  readonly instanceId: string
  /** Connection pool usage, for /metrics (server back end only). */
  readonly poolStats?: () => { readonly total: number; readonly idle: number; readonly waiting: number; readonly max: number }
}

const sqlNotifyAndPing = (sql: SqlClient.SqlClient) => ({
  // NOTIFY takes no bind parameters; pg_notify does.
  notify: (channel: string, payload: string) => Effect.asVoid(sql`select pg_notify(${channel}, ${payload})`),
  ping: Effect.asVoid(sql`select 1 from schema_migrations limit 1`)
})

export class Database extends Context.Tag("Database")<Database, DatabaseShape>() {}

/** int8 (bigint, count(*)) comes back as a JS number on both back ends, as PGlite does by default. */
const pgTypes: Pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 20 ? (value: string) => Number(value) : Pg.types.getTypeParser(oid, format ?? "text")) as Pg.CustomTypesConfig["getTypeParser"]
}

/**
 * pg runs parameterised queries as unnamed statements, which PostgreSQL parses and plans
 * every time (about three times the server CPU of a prepared one). This client names each
 * distinct SQL text once, so every pooled connection prepares it on first use and reuses
 * it after; texts past a bound (generated IN lists, bulk inserts) stay unnamed.
 */
const statementNames = new Map<string, string>()
const MAX_NAMED_STATEMENTS = 2000

const statementName = (text: string): string | undefined => {
  const known = statementNames.get(text)
  if (known !== undefined || statementNames.size >= MAX_NAMED_STATEMENTS) return known
  const name = `aiv_${statementNames.size.toString(36)}`
  statementNames.set(text, name)
  return name
}

/**
 * An escape in JSON text other than \" and \\ (a control character or a lone surrogate): a run of
 * backslashes is escapes in pairs, so an odd run followed by anything but a quote.
 */
const OTHER_JSON_ESCAPE = /(?<!\\)(?:\\\\)*\\[^"\\]/

/**
 * A flat array of strings, finite numbers, booleans and nulls as PostgreSQL's array literal, written
 * by the native JSON.stringify: for such values JSON's text is the literal's but for its brackets
 * (strings double-quoted with \" and \\ escaped, an unquoted null read as NULL). pg escapes each
 * element in JavaScript, which costs a bulk insert of a few hundred rows about half a millisecond
 * of server CPU (docs/performance.md). Anything else (a date, a nested array, a control character
 * or lone surrogate, which JSON escapes otherwise than PostgreSQL) gives undefined: pg's way then.
 */
export const arrayLiteral = (values: ReadonlyArray<unknown>): string | undefined => {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    const type = typeof v
    if (!(type === "string" || type === "boolean" || v === null || (type === "number" && Number.isFinite(v)))) return undefined
  }
  const json = JSON.stringify(values)
  return json.includes("\\") && OTHER_JSON_ESCAPE.test(json) ? undefined : `{${json.slice(1, -1)}}`
}

/** The statement's values with each flat array as its literal (arrayLiteral) where it can be. */
const withArrayLiterals = (values: ReadonlyArray<unknown>): Array<unknown> => {
  const out = new Array<unknown>(values.length)
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    out[i] = Array.isArray(v) ? arrayLiteral(v) ?? v : v
  }
  return out
}

class PreparingClient extends Pg.Client {
  // Kept `any`: an override must accept each of pg's dozen typed `query` overloads, and TypeScript checks one
  // implementation against all of them only through `any`; the call is forwarded unchanged but for the name
  // and the arrays' literals.
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === "string" && Array.isArray(values) && values.length > 0) {
      const name = statementName(config)
      const prepared = withArrayLiterals(values)
      return super.query(name === undefined ? { text: config, values: prepared } : { name, text: config, values: prepared }, callback)
    }
    return super.query(config, values, callback)
  }
}

const POOL_MAX = 10

/** The background pool's connections: a fold and a verdict pass at once (BackgroundSql). */
const BACKGROUND_POOL_MAX = 2

/**
 * The SqlClient of a process's background work (the rollup aggregator's folds and upkeep, the
 * verification pass's verdicts). On the server back end it has a pool of its own: the request pool
 * serves its waiters in arrival order, so under a load beyond capacity a fold waited behind hundreds of
 * requests, the queue it drains grew, and every read, which adds the queue to the rollups, grew with it
 * (docs/performance.md). On the embedded database it is the one session's client.
 */
export class BackgroundSql extends Context.Tag("BackgroundSql")<BackgroundSql, SqlClient.SqlClient>() {}

/** BackgroundSql as the process's SqlClient itself (the embedded back ends: one session either way). */
const backgroundIsTheClient = Layer.effect(BackgroundSql, SqlClient.SqlClient)

/**
 * The requests' connections plan each prepared statement once (its generic plan) and keep it. By default
 * PostgreSQL plans a prepared statement again on every execution while its generic plan's estimate looks
 * costlier than the plans made for the first values, and starts over when a table's statistics change;
 * the agent reads' statements (a window's page of paths with the queued hits added) took that path, and
 * planning them cost more than running them (docs/performance.md, "Plans made once").
 */
const REQUEST_PLANS = "-c plan_cache_mode=force_generic_plan"

/** The custom-plan pool's connections, opened when first used (CustomPlanSql). */
const CUSTOM_PLAN_POOL_MAX = POOL_MAX

/**
 * The SqlClient of request statements whose plans depend on their values, which PostgreSQL plans with
 * its default (custom plans while they look cheaper): on the server back end a pool of its own. The
 * visibility reads are: the mentions list ran ten times slower on a generic plan (docs/performance.md,
 * "Plans made once"). On the embedded database it is the one session's client.
 */
export class CustomPlanSql extends Context.Tag("CustomPlanSql")<CustomPlanSql, SqlClient.SqlClient>() {}

const customPlansOnTheClient = Layer.effect(CustomPlanSql, SqlClient.SqlClient)

const APPLICATION = "ai-visibility/"

/**
 * The one connection of a process that runs its LISTENs (what `peers` looks for), made afresh once
 * lost. @effect/sql-pg's own `listen` swallows its connection's errors and never ends, so a process
 * whose listen backend was terminated would never hear again; here every subscriber's stream fails
 * with the connection, and the next subscription opens a new one.
 */
const makeListener = (connect: () => Pg.Client) => {
  interface Current {
    readonly client: Pg.Client
    readonly ready: Promise<void>
    lost: SqlError | undefined
    readonly onLost: Set<(error: SqlError) => void>
  }
  let current: Current | undefined
  const open = (): Current => {
    if (current !== undefined && current.lost === undefined) return current
    const client = connect()
    const loseThis = (cause: unknown) => {
      if (entry.lost !== undefined) return
      entry.lost = new SqlError({ cause, message: "the LISTEN connection was lost" })
      for (const notify of entry.onLost) notify(entry.lost)
      client.end().catch(() => {})
    }
    const entry: Current = { client, ready: client.connect().then(() => {}), lost: undefined, onLost: new Set() }
    client.on("error", loseThis)
    client.on("end", () => loseThis(new Error("connection ended")))
    entry.ready.catch(loseThis)
    current = entry
    lose = loseThis
    return entry
  }
  let lose: (cause: unknown) => void = () => {}
  const listen = (channel: string): Stream.Stream<string | Listening, SqlError> =>
    Stream.asyncPush<string | Listening, SqlError>((emit) =>
      Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const entry = open()
            const onNotification = (message: Pg.Notification) => {
              if (message.channel === channel && message.payload !== undefined) emit.single(message.payload)
            }
            const onLost = (error: SqlError) => emit.fail(error)
            entry.onLost.add(onLost)
            entry.client.on("notification", onNotification)
            const release = () => {
              entry.onLost.delete(onLost)
              entry.client.off("notification", onNotification)
            }
            try {
              await entry.ready
              await entry.client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`)
            } catch (cause) {
              release()
              throw cause
            }
            emit.single(Listening)
            return { entry, release }
          },
          catch: (cause) => new SqlError({ cause, message: "Failed to listen" })
        }),
        ({ entry, release }) =>
          Effect.sync(release).pipe(
            Effect.zipRight(
              entry.lost === undefined
                ? Effect.promise(() => entry.client.query(`UNLISTEN ${Pg.escapeIdentifier(channel)}`).catch(() => {}))
                : Effect.void
            ),
            // A connection that stopped answering must not hold the subscriber's retry.
            Effect.timeoutOption(Duration.seconds(1))
          )
      )
    )
  return { listen, relisten: () => lose(new Error("no longer heard through")) }
}

/**
 * The server back end. `statementTimeoutMs` (0: none) is every connection's statement_timeout, sent at
 * connect: PostgreSQL cancels a statement running (or waiting for a lock) longer, with SQLSTATE 57014,
 * which the edge answers 503 "took too long" (src/platform/Edge.ts). Migrations lift it for their own
 * transaction (src/platform/Migrations.ts).
 */
const serverLayer = (url: Redacted.Redacted, statementTimeoutMs = 0) => {
  let current: Pg.Pool | undefined
  const instanceId = crypto.randomUUID()
  const acquirePool = (max: number, onPool: (pool: Pg.Pool) => void, options?: string) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new Pg.Pool({
          connectionString: Redacted.value(url),
          max,
          idleTimeoutMillis: 30_000,
          application_name: APPLICATION + instanceId,
          ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
          ...(options !== undefined ? { options } : {}),
          types: pgTypes,
          Client: PreparingClient
        })
        pool.on("error", () => {})
        onPool(pool)
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1000))
    )
  const client = PgClient.layerFromPool({
    acquire: acquirePool(POOL_MAX, (pool) => (current = pool), REQUEST_PLANS),
    types: pgTypes
  })
  const background = Layer.scoped(
    BackgroundSql,
    PgClient.fromPool({ acquire: acquirePool(BACKGROUND_POOL_MAX, () => {}), types: pgTypes })
  ).pipe(Layer.provide(Reactivity.layer))
  const customPlans = Layer.scoped(
    CustomPlanSql,
    PgClient.fromPool({ acquire: acquirePool(CUSTOM_PLAN_POOL_MAX, () => {}), types: pgTypes })
  ).pipe(Layer.provide(Reactivity.layer))
  const listener = makeListener(() =>
    new Pg.Client({
      connectionString: Redacted.value(url),
      application_name: APPLICATION + instanceId,
      types: pgTypes,
      // A peer that vanished without closing the socket is found by the heartbeat of its subscribers
      // (src/platform/Invalidations.ts); TCP keepalive frees the socket too.
      keepAlive: true
    })
  )
  const database = Layer.effect(
    Database,
    Effect.map(PgClient.PgClient, (pg): DatabaseShape => ({
      kind: "pg",
      ...listener,
      ...sqlNotifyAndPing(pg),
      instanceId,
      peers: () =>
        pg`
          select distinct substr(application_name, ${APPLICATION.length + 1}) as id from pg_stat_activity
          where datname = current_database() and application_name like ${APPLICATION + "%"}
            and query like 'LISTEN %'`.pipe(
          rows(PeerRow),
          Effect.map((peers) => peers.map((row) => row.id).filter((id) => id !== instanceId))
        ),
      poolStats: () => ({
        total: current?.totalCount ?? 0,
        idle: current?.idleCount ?? 0,
        waiting: current?.waitingCount ?? 0,
        max: POOL_MAX
      })
    }))
  ).pipe(Layer.provide(client))
  return Layer.mergeAll(client, database, background, customPlans)
}

/**
 * The embedded database: one PGlite instance (one session) behind the same SqlClient
 * interface and the same compiler as the server back end. A semaphore of one permit
 * keeps a transaction's statements together: while a transaction holds the connection,
 * other statements wait.
 */
export const makePgliteClient = (db: PGlite, session?: EmbeddedSession) =>
  Effect.gen(function*() {
    const { lock, run } = session ?? (yield* makeEmbeddedSession(db))
    const compiler = PgClient.makeCompiler()

    const makeConnection = (guard: <A>(effect: Effect.Effect<A, SqlError>) => Effect.Effect<A, SqlError>): Connection => {
      const execute = (
        sql: string,
        params: ReadonlyArray<unknown>,
        transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
      ) => guard(transformRows ? Effect.map(run(sql, params), transformRows) : run(sql, params))
      return {
        execute,
        executeRaw: (sql, params) => guard(run(sql, params)),
        executeValues: (sql, params) => guard(run(sql, params, "array")),
        executeUnprepared: execute,
        executeStream: (sql, params, transformRows) =>
          Stream.fromIterableEffect(execute(sql, params, transformRows))
      }
    }

    const shared = makeConnection(lock.withPermits(1))
    const held = makeConnection((effect) => effect)
    const transactionAcquirer = Effect.acquireRelease(lock.take(1), () => lock.release(1)).pipe(Effect.as(held))

    return yield* SqlClient.make({
      acquirer: Effect.succeed(shared),
      transactionAcquirer,
      compiler,
      spanAttributes: [["db.system.name", "postgresql"]]
    })
  })

/** The one session's statement runner and permit, shared by this process's client and the channel. */
const makeEmbeddedSession = (db: PGlite) =>
  Effect.gen(function*() {
    const lock = yield* Effect.makeSemaphore(1)
    const run = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
      Effect.tryPromise({
        try: async () => {
          if (params.length === 0 && rowMode === undefined) {
            // No parameters: the simple protocol, which also runs multi-statement scripts (migrations).
            const results = await db.exec(sql)
            // allow-cast: the SqlClient's rows are `ReadonlyArray<any>`; the repositories decode them (Rows.ts).
            return (results[results.length - 1]?.rows ?? []) as ReadonlyArray<any>
          }
          // allow-cast: PGlite only reads the parameters (its type asks for a mutable array); rows as above.
          const result = await db.query(sql, params as Array<unknown>, rowMode ? { rowMode } : undefined)
          return result.rows as ReadonlyArray<any> // allow-cast: the rows, as the simple protocol's above
        },
        catch: (cause) => new SqlError({ cause, message: cause instanceof Error ? cause.message : "Failed to execute statement" })
      })
    return { db, lock, run } satisfies EmbeddedSession
  })

const openedLayer = (dataDir: string) =>
  Layer.scopedContext(
    Effect.gen(function*() {
      if (dataDir !== "memory://") {
        mkdirSync(dataDir, { recursive: true })
        yield* acquireDataDirLock(dataDir)
      }
      const db = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => PGlite.create(dataDir === "memory://" ? undefined : dataDir),
          catch: (cause) => new SqlError({ cause, message: `Cannot open the embedded database in ${dataDir}` })
        }),
        (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
      )
      const session = yield* makeEmbeddedSession(db)
      const client = yield* makePgliteClient(db, session)
      // Another process on this data directory (the CLI beside a server) goes through this one.
      // Not listening (a socket path past the system's ~107 bytes, say) costs the CLI its way in, not the server.
      if (dataDir !== "memory://") {
        yield* serveChannel(dataDir, session).pipe(
          Effect.catchAll((error) => Effect.logWarning(`${error.message}: bun run cli cannot reach this database while this process runs`))
        )
      }
      const database: DatabaseShape = {
        kind: "pglite",
        ...sqlNotifyAndPing(client),
        instanceId: "embedded",
        peers: () => Effect.succeed([]),
        // In process: nothing between the database and its listener to go silent.
        relisten: () => {},
        listen: (channel) =>
          Stream.asyncPush<string | Listening, SqlError>((emit) =>
            Effect.acquireRelease(
              Effect.tryPromise({
                try: async () => {
                  const unlisten = await db.listen(channel, (payload) => emit.single(payload))
                  emit.single(Listening)
                  return unlisten
                },
                catch: (cause) => new SqlError({ cause, message: "Failed to listen" })
              }),
              (unlisten) => Effect.promise(() => unlisten()).pipe(Effect.ignore)
            )
          )
      }
      return Context.make(SqlClient.SqlClient, client).pipe(Context.add(Database, database))
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * The embedded database of a data directory another live process holds, through that process's channel
 * (EmbeddedChannel.ts): the same SqlClient, its statements run in the holder's session.
 */
const channelLayer = (dataDir: string, holder: number) =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const channel = yield* Effect.acquireRelease(
        connectChannel(dataDir).pipe(
          Effect.mapError((error) =>
            new SqlError({
              cause: error,
              message: `The embedded database in ${dataDir} is held by process ${holder} (a running server?), ` +
                `and its channel ${channelPath(dataDir)} does not answer. Stop that process, or set DATABASE_URL to use ` +
                `a PostgreSQL server shared by both.`
            })
          )
        ),
        (channel) => Effect.sync(() => channel.close())
      )
      const rowsOf = (reply: Reply): ReadonlyArray<any> => ("rows" in reply ? reply.rows : [])
      const makeConnection = (held: boolean): Connection => {
        const run = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
          Effect.map(
            channel.request(rowMode === undefined ? { op: "query", sql, params, held } : { op: "query", sql, params, rowMode, held }),
            rowsOf
          )
        const execute = (
          sql: string,
          params: ReadonlyArray<unknown>,
          transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
        ) => (transformRows ? Effect.map(run(sql, params), transformRows) : run(sql, params))
        return {
          execute,
          executeRaw: (sql, params) => run(sql, params),
          executeValues: (sql, params) => run(sql, params, "array"),
          executeUnprepared: execute,
          executeStream: (sql, params, transformRows) => Stream.fromIterableEffect(execute(sql, params, transformRows))
        }
      }
      const transactionAcquirer = Effect.acquireRelease(
        channel.request({ op: "begin" }),
        () => Effect.ignore(channel.request({ op: "end" }))
      ).pipe(Effect.as(makeConnection(true)))
      const client = yield* SqlClient.make({
        acquirer: Effect.succeed(makeConnection(false)),
        transactionAcquirer,
        compiler: PgClient.makeCompiler(),
        spanAttributes: [["db.system.name", "postgresql"]]
      })
      const database: DatabaseShape = {
        kind: "pglite",
        ...sqlNotifyAndPing(client),
        instanceId: `embedded-channel/${crypto.randomUUID()}`,
        peers: () => Effect.succeed([]),
        // A short-lived command's channel: it ends with the command, nothing to listen again on.
        relisten: () => {},
        listen: (name) =>
          Stream.asyncPush<string | Listening, SqlError>((emit) =>
            Effect.acquireRelease(
              Effect.suspend(() => {
                channel.onNotify(name, (payload) => emit.single(payload))
                return Effect.tap(channel.request({ op: "listen", channel: name }), () => emit.single(Listening))
              }),
              () => {
                channel.onNotify(name, undefined)
                return Effect.ignore(channel.request({ op: "unlisten", channel: name }))
              }
            )
          )
      }
      return Context.make(SqlClient.SqlClient, client).pipe(Context.add(Database, database))
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * The embedded database: opened here, or, when another live process holds the data directory (a
 * server, and this is the CLI), reached through that process's channel.
 */
const embeddedLayer = (dataDir: string) =>
  Layer.provideMerge(
    Layer.merge(backgroundIsTheClient, customPlansOnTheClient),
    dataDir === "memory://" ? openedLayer(dataDir) : Layer.unwrapEffect(Effect.sync(() => {
      const holder = dataDirHolder(dataDir)
      return holder === undefined ? openedLayer(dataDir) : channelLayer(dataDir, holder)
    }))
  )

/** SqlClient + Database from AppConfig: the server when DATABASE_URL is set, else embedded PGlite. */
export const SqlLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onSome: (url) => serverLayer(url, config.statementTimeoutMs),
      onNone: () => embeddedLayer(config.dataDir)
    })
  )
)

/** A fresh in-memory embedded database, for tests. */
export const SqlMemory = embeddedLayer("memory://")

/** A server database at this URL, for tests against PostgreSQL (a statement timeout in ms, 0 for none). */
export const sqlServer = (url: string, statementTimeoutMs = 0) => serverLayer(Redacted.make(url), statementTimeoutMs)
