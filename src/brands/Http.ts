import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { CurrentAccount, CurrentUser } from "../accounts/Api.js"
import { ApiKeys } from "../accounts/ApiKeys.js"
import { ServerApi } from "../api.js"
import { encodedJson, encodedJsonBytes, jsonBytesResponse } from "../platform/FastJson.js"
import type { PrecomputedRoute } from "../platform/PrecomputedRoutes.js"
import { recordAccount } from "../platform/RequestMeta.js"
import { Brand, BrandList } from "./Api.js"
import { type BrandList as BrandListView, Brands, brandWire } from "./Brands.js"

/**
 * The list's body, encoded once per list: the list is the same object for as long as the account's
 * brands stay in memory (Brands.ts), and encoding it (JSON and UTF-8) was some 3% of GET /brands' CPU.
 */
const listBodies = new WeakMap<BrandListView, Uint8Array>()

/** The list in its wire form (FastJson.ts). */
const listResponse = (list: BrandListView) => {
  let body = listBodies.get(list)
  if (body === undefined) {
    body = encodedJsonBytes(BrandList, { brands: list.brands.map(brandWire), count: list.count, limit: list.limit })
    listBodies.set(list, body)
  }
  return jsonBytesResponse(body)
}

export const BrandsHttpLive = HttpApiBuilder.group(ServerApi, "brands", (handlers) =>
  Effect.gen(function*() {
    const brands = yield* Brands
    return handlers
      // The hot path of the public API: the list leaves in its wire form, encoded once (FastJson.ts).
      .handle("list", () => Effect.flatMap(CurrentAccount, ({ accountId }) => Effect.map(brands.list(accountId), listResponse)))
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) =>
          Effect.map(brands.get(accountId, path.slug), (brand) => encodedJson(Brand, brandWire(brand)))))
  }))

/**
 * GET /brands answered at the edge (src/platform/PrecomputedRoutes.ts): the bearer check of the
 * BearerAuth middleware (the key, the account noted for the log line) and the handler's list. A
 * request it does not answer (no key, an unknown or revoked one) goes on to the route above.
 */
export const brandsListPrecomputed: Effect.Effect<PrecomputedRoute, never, Brands | ApiKeys> = Effect.gen(function*() {
  const brands = yield* Brands
  const keys = yield* ApiKeys
  // Its method and path as the served API defines them (prefix included).
  const endpoint = ServerApi.groups["brands"]?.endpoints["list"]
  if (endpoint === undefined) return yield* Effect.dieMessage("the served API has no brands list endpoint")
  return {
    method: endpoint.method,
    path: endpoint.path,
    answer: (request, facts) =>
      keys.authenticate(request.headers["authorization"]).pipe(
        Effect.flatMap(({ accountId }) => {
          recordAccount(Option.some(facts), accountId)
          return brands.list(accountId)
        }),
        Effect.map((list) => Option.some(listResponse(list))),
        Effect.orElseSucceed(() => Option.none())
      )
  }
})

export const DashboardBrandsHttpLive = HttpApiBuilder.group(ServerApi, "dashboardBrands", (handlers) =>
  Effect.gen(function*() {
    const brands = yield* Brands
    return handlers
      .handle("list", () => Effect.flatMap(CurrentUser, ({ accountId }) => brands.list(accountId)))
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, ({ accountId }) => brands.create(accountId, payload)))
      .handle("addCompetitor", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, ({ accountId }) => brands.addCompetitor(accountId, path.slug, payload)))
      .handle("addPrompt", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, ({ accountId }) => brands.addPrompt(accountId, path.slug, payload)))
      .handle("setDrainSecret", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, ({ accountId }) => brands.setDrainSecret(accountId, path.slug, payload.secret)))
  }))
