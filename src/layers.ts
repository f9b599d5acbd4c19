import { HttpApiBuilder } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import { Accounts, AccountsLive } from "./accounts/Accounts.js"
import { ApiKeys, ApiKeysLive } from "./accounts/ApiKeys.js"
import { AuthHttpLive, BearerAuthLive, MeHttpLive, SessionAuthLive } from "./accounts/Http.js"
import { KeyHashing, KeyHashingLive } from "./accounts/KeyHashing.js"
import { ApiKeysRepo, ApiKeysRepoLive } from "./accounts/KeysRepo.js"
import { PasswordHasher, PasswordHasherLive } from "./accounts/Passwords.js"
import { AccountsRepo, AccountsRepoLive } from "./accounts/Repo.js"
import { AgentsLive } from "./agents/Http.js"
import { ServerApi } from "./api.js"
import { Brands, BrandsLive } from "./brands/Brands.js"
import { BrandsHttpLive, DashboardBrandsHttpLive } from "./brands/Http.js"
import { BrandsRepo, BrandsRepoLive } from "./brands/Repo.js"
import { IngestionLive } from "./ingestion/Http.js"
import { AppConfig } from "./platform/Config.js"
import type { Database } from "./platform/Sql.js"
import { edgeMiddleware } from "./platform/Edge.js"
import { SystemHttpLive } from "./platform/SystemHttp.js"
import { CitationsLive, IndustryLive, VisibilityLive } from "./visibility/Http.js"

/**
 * The whole wiring, in one place. Infrastructure (config, database) comes from outside,
 * so the server, the CLI and the tests share everything else.
 */

/** One repository per aggregate; Live ones talk SQL, tests may pass in-memory fakes instead. */
export type Repositories = AccountsRepo | ApiKeysRepo | BrandsRepo
export const RepositoriesLive: Layer.Layer<Repositories, never, SqlClient.SqlClient> = Layer.mergeAll(
  AccountsRepoLive,
  ApiKeysRepoLive,
  BrandsRepoLive
)

export type Services = Accounts | ApiKeys | Brands | KeyHashing | PasswordHasher
export type Infrastructure = AppConfig | Database

/** Domain services over the repositories. */
export const makeServices = <E, R>(options: {
  readonly repositories: Layer.Layer<Repositories, E, R>
  readonly passwords?: Layer.Layer<PasswordHasher>
}) => {
  const base = Layer.mergeAll(KeyHashingLive, options.passwords ?? PasswordHasherLive)
  return Layer.mergeAll(AccountsLive, ApiKeysLive, BrandsLive).pipe(
    Layer.provideMerge(base),
    Layer.provideMerge(options.repositories)
  )
}

/** The HttpApi of the server: every group's handlers and both auth middlewares. */
export const HttpGroupsLive = HttpApiBuilder.api(ServerApi).pipe(
  Layer.provide([
    BrandsHttpLive,
    VisibilityLive,
    AgentsLive,
    IngestionLive,
    CitationsLive,
    IndustryLive,
    AuthHttpLive,
    MeHttpLive,
    DashboardBrandsHttpLive,
    SystemHttpLive
  ]),
  Layer.provide([BearerAuthLive, SessionAuthLive])
)

/**
 * The served application: HttpApi groups behind the edge middleware (JSON errors, Origin
 * check). No span exporter is configured, and building spans nobody reads doubled the
 * client cost of every SQL query (bench/brands-rps.ts), so the tracer is off.
 */
export const ApiLive = Layer.mergeAll(
  HttpGroupsLive,
  HttpApiBuilder.middleware(edgeMiddleware),
  Layer.setTracerEnabled(false)
)
