/**
 * The typed client of the customer API, derived from the same HttpApi definition as the server
 * (paths, parameters, response and error schemas). Import it from this repository:
 *
 * ```ts
 * import { Effect } from "effect"
 * import { makeClient, runWithFetch } from "./src/client.js"
 *
 * const program = Effect.gen(function*() {
 *   const api = yield* makeClient("http://localhost:8080", process.env.AIV_KEY!)
 *   const { brands } = yield* api.brands.list()
 *   return yield* api.agents.pages({ path: { slug: brands[0]!.brand_slug }, urlParams: { sort: "errors", limit: 20 } })
 * })
 * const pages = await runWithFetch(program)
 * ```
 *
 * Errors are typed values: `BadRequest`, `Unauthorized`, `NotFound`, `QuotaExceeded`... of
 * src/platform/HttpErrors.ts, decoded from the response status and body.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { PublicApi } from "./api.js"

export { PublicApi } from "./api.js"
export * from "./platform/HttpErrors.js"

/** A client of `<baseUrl>/api/public/v1/*` that sends `Authorization: Bearer <key>` on every request. */
export const makeClient = (baseUrl: string, key: string) =>
  HttpApiClient.make(PublicApi, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(key))
  })

export type PublicClient = Effect.Effect.Success<ReturnType<typeof makeClient>>

/** Runs a program that uses the client with the global fetch (Bun, Node 18+, browsers, Deno). */
export const runWithFetch = <A, E>(program: Effect.Effect<A, E, HttpClient.HttpClient>): Promise<A> =>
  Effect.runPromise(Effect.provide(program, FetchHttpClient.layer))
