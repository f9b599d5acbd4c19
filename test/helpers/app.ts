import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { PasswordHasherCheap } from "../../src/accounts/Passwords.js"
import { ApiLive, makeServices, type Repositories, RepositoriesLive } from "../../src/app/Layers.js"
import { agentsConfigTest, type AgentsConfigShape } from "../../src/agents/Config.js"
import { ingestionConfigTest, type IngestionConfigShape } from "../../src/ingestion/Config.js"
import { appConfigTest, type AppConfigShape } from "../../src/platform/Config.js"
import { runMigrations } from "../../src/platform/Migrations.js"
import { BackgroundSql, type Database, CustomPlanSql, SqlMemory, sqlServer } from "../../src/platform/Sql.js"
import { visibilityConfigTest, type VisibilityConfigShape } from "../../src/visibility/Visibility.js"
import { webhooksConfigTest, type WebhooksConfigShape } from "../../src/webhooks/Config.js"
import type { AddressResolver } from "../../src/webhooks/Ssrf.js"
import { makeFakeRepositories } from "../fakes/repositories.js"
import { Resolver, resolverFake, type ResolverShape } from "../../src/verification/Resolver.js"
import { verificationConfigTest, type VerificationConfigShape } from "../../src/verification/Verification.js"
import { fixedClock } from "./clock.js"
import { browserLike } from "./browser-like.js"
import { makeServerApp, planServers, sqlByHand, twoServerMode } from "./servers.js"

/** The domain services the app is built on (src/app/Layers.ts makeServices). */
export type AppServices = Layer.Layer.Success<ReturnType<typeof makeServices>>

export type Backend = "fake" | "pglite" | "postgres"

/**
 * Database back ends the database tests run on: always the embedded one, plus a server when TEST_DATABASE_URL
 * is set. With TEST_SERVERS=2 only the server (as two processes, test/helpers/servers.ts): the plain runs
 * cover the embedded one.
 */
export const databaseBackends = (): ReadonlyArray<Backend> =>
  twoServerMode() ? ["postgres"] : process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"]

const migrated = <E, R>(layer: Layer.Layer<any, E, R>) =>
  Layer.effectDiscard(runMigrations.pipe(Effect.orDie)).pipe(Layer.provideMerge(layer))

/** A fresh schema on the PostgreSQL server, so runs and files never see each other's rows. */
export const serverSchemaUrl = async (base: string) => {
  const { Client } = await import("pg")
  const schema = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const client = new Client({ connectionString: base })
  await client.connect()
  await client.query(`create schema ${schema}`)
  await client.end()
  const url = new URL(base)
  url.searchParams.set("options", `-c search_path=${schema}`)
  return url.toString()
}

export interface TestApp {
  readonly backend: Backend
  readonly fetch: (path: string, init?: RequestInit) => Promise<Response>
  /** Runs an effect against the same repositories and database as the app (set a plan, read rows). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Repositories | Database>) => Promise<A>
  /** Runs an effect with the app's domain services too (e.g. a scan), on the same database. */
  readonly runServices: <A, E>(effect: Effect.Effect<A, E, AppServices | Repositories | Database>) => Promise<A>
  /** SQL by hand on the app's database, as an operator would run it (database back ends only). */
  readonly sql: (text: string) => Promise<void>
  readonly dispose: () => Promise<void>
}

export interface TestAppOptions {
  /** postgres only: this database URL (e.g. one schema shared by two apps, as two server processes would). */
  readonly serverUrl?: string
  /** Database back ends only: the SqlClient the repositories get (e.g. one that can be made to fail). */
  readonly wrapSql?: (sql: SqlClient.SqlClient) => SqlClient.SqlClient
  /**
   * With TEST_SERVERS=2: why this app stays in the test process (e.g. the test changes process.env, which
   * server processes started before it never see).
   */
  readonly inProcess?: string
  /** Ingestion limits and spool (default: the defaults and a fresh temp spool directory). */
  readonly ingest?: Partial<IngestionConfigShape>
  /** Visibility reads (e.g. a small fan-out group cap); default the defaults. */
  readonly visibility?: Partial<VisibilityConfigShape>
  /** Agent analytics: retention horizons, sweep interval, the tag's rate limit (default: the defaults). */
  readonly agents?: Partial<AgentsConfigShape>
  /** A fixed "now" for the app's Clock (src/platform/Time.ts), so "today" is known; sleeping stays real. */
  readonly now?: Date
  /** Server settings (e.g. rate limits, REDIS_URL); default appConfigTest's (rate limits off). */
  readonly config?: Partial<AppConfigShape>
  /** Verified agents: the DNS resolver (default: one knowing no name) and the limits (default: the defaults). */
  readonly resolver?: ResolverShape
  readonly verification?: Partial<VerificationConfigShape>
  /** Webhook delivery and alert settings (default: the defaults). */
  readonly webhooks?: Partial<WebhooksConfigShape>
  /** The SSRF guard's resolver (a fake answering chosen addresses); in process only. */
  readonly addressResolver?: Layer.Layer<AddressResolver>
}

/**
 * The whole application, in process (no port), on the chosen back end. With TEST_SERVERS=2 (and
 * TEST_DATABASE_URL), "postgres" is two real server processes on one schema instead, requests
 * alternating between them (test/helpers/servers.ts), unless an option cannot cross a process boundary.
 */
export const makeTestApp = async (backend: Backend, options: TestAppOptions = {}): Promise<TestApp> => {
  if (backend === "postgres" && twoServerMode()) {
    const url = options.serverUrl ?? await serverSchemaUrl(process.env.TEST_DATABASE_URL!)
    const plan = planServers(url, options)
    if (plan._tag === "servers") return makeServerApp(url, plan)
    // This app falls back to the in-process handler (plan.why says which option forced it).
    console.info(`TEST_SERVERS=2: this app runs in process (${plan.why})`)
    return makeInProcessApp(backend, { ...options, serverUrl: url })
  }
  return makeInProcessApp(backend, options)
}

/** The fake repositories and their database's LISTEN/NOTIFY, one store. */
const fakeInfra = () => {
  const fake = makeFakeRepositories()
  return Layer.mergeAll(fake.layer, fake.database)
}

const makeInProcessApp = async (backend: Backend, options: TestAppOptions): Promise<TestApp> => {
  const { wrapSql } = options
  // The background and custom-plan clients too (the aggregator's folds, the verdict pass, the visibility
  // reads): a fault reaches them as well.
  const withSql = <E, R>(db: Layer.Layer<SqlClient.SqlClient | BackgroundSql | CustomPlanSql | Database, E, R>) =>
    wrapSql === undefined
      ? db
      : Layer.mergeAll(
        Layer.effect(SqlClient.SqlClient, Effect.map(SqlClient.SqlClient, wrapSql)),
        Layer.effect(BackgroundSql, Effect.map(BackgroundSql, wrapSql)),
        Layer.effect(CustomPlanSql, Effect.map(CustomPlanSql, wrapSql))
      ).pipe(Layer.provideMerge(db))
  const infra =
    backend === "fake"
      ? fakeInfra()
      : backend === "pglite"
      ? RepositoriesLive.pipe(Layer.provideMerge(withSql(migrated(SqlMemory))))
      : RepositoriesLive.pipe(Layer.provideMerge(withSql(migrated(sqlServer(
        options.serverUrl ?? await serverSchemaUrl(process.env.TEST_DATABASE_URL!),
        options.config?.statementTimeoutMs ?? 0
      )))))

  const config = appConfigTest({ databaseUrl: Option.none<Redacted.Redacted>(), ...options.config })
  // One value: the handler and `runServices` build the very same services (the memo map below).
  const services = makeServices({
        repositories: infra,
        passwords: PasswordHasherCheap,
        ingestionConfig: ingestionConfigTest(options.ingest),
        visibilityConfig: visibilityConfigTest(options.visibility),
        agentsConfig: agentsConfigTest(options.agents),
        resolver: Layer.succeed(Resolver, options.resolver ?? resolverFake({ ptr: {}, addresses: {} })),
        verificationConfig: verificationConfigTest(options.verification),
        webhooksConfig: webhooksConfigTest(options.webhooks),
        ...(options.addressResolver ? { addressResolver: options.addressResolver } : {})
      })
  const layer = Layer.mergeAll(ApiLive, HttpServer.layerContext, options.now ? Layer.setClock(fixedClock(options.now)) : Layer.empty).pipe(
    Layer.provide(services),
    Layer.provide(infra),
    Layer.provide(config)
  )
  // One memo map: the handler and `run` share the very same repositories and database.
  const memoMap = Effect.runSync(Layer.makeMemoMap)
  const { handler, dispose } = HttpApiBuilder.toWebHandler(layer, { memoMap })
  const runtime = ManagedRuntime.make(infra, memoMap)
  const servicesRuntime = ManagedRuntime.make(services.pipe(Layer.provideMerge(infra), Layer.provide(config)), memoMap)
  return {
    backend,
    fetch: (path, init) => {
      const headers = browserLike(new Headers(init?.headers))
      return handler(new Request(`http://localhost${path}`, { ...init, headers }))
    },
    run: (effect) => runtime.runPromise(effect),
    runServices: (effect) => servicesRuntime.runPromise(effect),
    sql: sqlByHand(runtime),
    dispose: async () => {
      await dispose()
      await servicesRuntime.dispose()
      await runtime.dispose()
    }
  }
}

export { fixedClock }

export const json = async (response: Response): Promise<unknown> => JSON.parse(await response.text())

/** Signs up a fresh account; returns its session cookie. */
export const signup = async (app: TestApp, email: string, password = "correct horse battery") => {
  const response = await app.fetch("/api/v1/auth/signup", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password, account_name: `Account of ${email}` })
  })
  if (response.status !== 201) throw new Error(`signup ${response.status}: ${await response.text()}`)
  const cookie = response.headers.get("set-cookie") ?? ""
  return cookie.split(";")[0]!
}

export const createKey = async (app: TestApp, cookie: string, name = "test key") => {
  const response = await app.fetch("/api/v1/me/api-keys", {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ name })
  })
  if (response.status !== 201) throw new Error(`create key ${response.status}: ${await response.text()}`)
  return (await response.json()) as { id: string; key: string; prefix: string }
}

export const createBrand = async (app: TestApp, cookie: string, slug: string, extra: Record<string, unknown> = {}) => {
  const response = await app.fetch("/api/v1/me/brands", {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ brand_slug: slug, brand_name: slug.toUpperCase(), domain: `${slug}.com`, vertical: "saas", ...extra })
  })
  if (response.status !== 201) throw new Error(`create brand ${response.status}: ${await response.text()}`)
  return (await response.json()) as { id: number; brand_slug: string; site_id: string }
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/**
 * Two apps on one fresh schema of the PostgreSQL server at `base` (with TEST_SERVERS=2, each is two
 * server processes), each with its own in-process caches, and an account with an API key made through
 * the first: what the tests of invalidation across processes start from. `dispose` ends both.
 */
export const twoAppsWithKey = async (base: string, email: string) => {
  const url = await serverSchemaUrl(base)
  const a = await makeTestApp("postgres", { serverUrl: url })
  const b = await makeTestApp("postgres", { serverUrl: url })
  const dispose = async () => {
    await a.dispose()
    await b.dispose()
  }
  try {
    const cookie = await signup(a, email)
    return { a, b, cookie, key: await createKey(a, cookie), dispose }
  } catch (error) {
    await dispose()
    throw error
  }
}
