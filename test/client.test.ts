import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "bun:test"
import { Effect, Either, Layer } from "effect"
import { PublicApi } from "../src/api.js"
import { NotFound, Unauthorized } from "../src/platform/HttpErrors.js"
import { createBrand, createKey, makeTestApp, signup, type TestApp } from "./helpers/app.js"

/** The typed client derived from the same HttpApi definition, against the in-process server. */
describe("typed client (HttpApiClient of PublicApi)", () => {
  let app: TestApp
  let key: string
  let siteId: string
  beforeAll(async () => {
    app = await makeTestApp("pglite")
    const cookie = await signup(app, "client@example.test")
    siteId = (await createBrand(app, cookie, "acme")).site_id
    key = (await createKey(app, cookie)).key
  })
  afterAll(() => app.dispose())

  const makeClient = (token: string) =>
    HttpApiClient.make(PublicApi, {
      baseUrl: "http://localhost",
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    })
  type PublicClient = Effect.Effect.Success<ReturnType<typeof makeClient>>

  const withClient = <A, E>(token: string, f: (client: PublicClient) => Effect.Effect<A, E>) => {
    // fetch goes to the in-process handler; no port is opened.
    const inProcessFetch = Layer.succeed(FetchHttpClient.Fetch, ((input: RequestInfo | URL, init?: RequestInit) =>
      app.fetch(new URL(input instanceof Request ? input.url : input.toString()).pathname + new URL(input instanceof Request ? input.url : input.toString()).search, init)) as typeof fetch)
    return Effect.runPromise(
      makeClient(token).pipe(
        Effect.flatMap(f),
        Effect.provide(FetchHttpClient.layer),
        Effect.provide(inProcessFetch)
      )
    )
  }

  it("lists and gets brands as typed values", async () => {
    const list = await withClient(key, (client) => client.brands.list())
    expect(list.count).toBe(1)
    expect(list.limit).toBe(1)
    expect(list.brands[0]!.site_id).toBe(siteId)
    expect(list.brands[0]!.added_at).toBeInstanceOf(Date)
    const brand = await withClient(key, (client) => client.brands.get({ path: { slug: "acme" } }))
    expect(brand.brand_slug).toBe("acme")
  })

  it("decodes error statuses back into their tagged errors", async () => {
    const missing = await withClient(key, (client) => Effect.either(client.brands.get({ path: { slug: "nope" } })))
    expect(Either.isLeft(missing) && missing.left).toBeInstanceOf(NotFound)
    // The visibility reads answer typed values, and 404 as NotFound.
    const citations = await withClient(key, (client) => client.citations.citations({ urlParams: {} }))
    expect(citations).toEqual({ domains: [], total_citations: 0, range: "30d" })
    const competitor = await withClient(key, (client) =>
      Effect.either(client.industry.competitorPrompts({ path: { name: "nobody" }, urlParams: {} })))
    expect(Either.isLeft(competitor) && competitor.left).toBeInstanceOf(NotFound)
    const denied = await withClient("aivkey_wrong", (client) => Effect.either(client.brands.list()))
    expect(Either.isLeft(denied) && denied.left).toBeInstanceOf(Unauthorized)
    expect(Either.isLeft(denied) && (denied.left as Unauthorized).error).toBe("invalid API key")
  })
})
