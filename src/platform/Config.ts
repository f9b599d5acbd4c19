import { Config, Context, Effect, Layer, Option, Redacted } from "effect"

/** Settings read once from the environment; every service asks this tag, never process.env. */
export interface AppConfigShape {
  readonly port: number
  readonly host: string
  /** PostgreSQL server URL; None means the embedded PGlite database under dataDir. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  /** Largest request body accepted, in bytes. */
  readonly maxBodyBytes: number
  /** How long a dashboard session lives. */
  readonly sessionDays: number
  /** How often pending API-key last-used times are written back. */
  readonly lastUsedFlushSeconds: number
}

export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {}

export const appConfigFromEnv: Config.Config<AppConfigShape> = Config.all({
  port: Config.integer("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")).pipe(
    // An empty DATABASE_URL means "not set": the embedded database.
    Config.map(Option.filter((url) => Redacted.value(url).trim() !== ""))
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  maxBodyBytes: Config.integer("MAX_BODY_BYTES").pipe(Config.withDefault(32 * 1024 * 1024)),
  sessionDays: Config.integer("SESSION_DAYS").pipe(Config.withDefault(30)),
  lastUsedFlushSeconds: Config.integer("LAST_USED_FLUSH_SECONDS").pipe(Config.withDefault(60))
})

export const AppConfigLive = Layer.effect(AppConfig, appConfigFromEnv)

export const appConfigTest = (overrides: Partial<AppConfigShape> = {}) =>
  Layer.succeed(AppConfig, {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: Option.none(),
    dataDir: "memory://",
    maxBodyBytes: 32 * 1024 * 1024,
    sessionDays: 30,
    lastUsedFlushSeconds: 60,
    ...overrides
  })

export const readAppConfig = Effect.flatMap(AppConfig, Effect.succeed)
