import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentAccount, CurrentUser } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { Brands } from "./Brands.js"

export const BrandsHttpLive = HttpApiBuilder.group(ServerApi, "brands", (handlers) =>
  Effect.gen(function*() {
    const brands = yield* Brands
    return handlers
      .handle("list", () => Effect.flatMap(CurrentAccount, ({ accountId }) => brands.list(accountId)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentAccount, ({ accountId }) => brands.get(accountId, path.slug)))
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
