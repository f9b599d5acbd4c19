import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentAccount, CurrentUser } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { encodedJson } from "../platform/FastJson.js"
import { Brand, BrandList } from "./Api.js"
import { Brands, brandWire } from "./Brands.js"

export const BrandsHttpLive = HttpApiBuilder.group(ServerApi, "brands", (handlers) =>
  Effect.gen(function*() {
    const brands = yield* Brands
    return handlers
      // The hot path of the public API: the list leaves in its wire form, encoded once (FastJson.ts).
      .handle("list", () =>
        Effect.flatMap(CurrentAccount, ({ accountId }) =>
          Effect.map(brands.list(accountId), (list) =>
            encodedJson(BrandList, {
              brands: list.brands.map(brandWire),
              count: list.count,
              limit: list.limit
            }))))
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentAccount, ({ accountId }) =>
          Effect.map(brands.get(accountId, path.slug), (brand) => encodedJson(Brand, brandWire(brand)))))
  }))

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
