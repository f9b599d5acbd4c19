import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentUser } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { Webhooks } from "./Webhooks.js"

export const WebhooksHttpLive = HttpApiBuilder.group(ServerApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const account = Effect.map(CurrentUser, (user) => user.accountId)
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(account, (id) => webhooks.create(id, payload)))
      .handle("list", () => Effect.flatMap(account, webhooks.list))
      .handle("update", ({ path, payload }) => Effect.flatMap(account, (id) => webhooks.update(id, path.id, payload)))
      .handle("remove", ({ path }) => Effect.flatMap(account, (id) => webhooks.remove(id, path.id)))
      .handle("test", ({ path }) => Effect.flatMap(account, (id) => webhooks.test(id, path.id)))
      .handle("rotate", ({ path }) => Effect.flatMap(account, (id) => webhooks.rotate(id, path.id)))
      .handle("deliveries", ({ path }) => Effect.flatMap(account, (id) => webhooks.deliveries(id, path.id)))
      .handle("retry", ({ path }) => Effect.flatMap(account, (id) => webhooks.retry(id, path.id, path.delivery_id)))
      .handle("events", () => Effect.flatMap(account, webhooks.events))
      .handle("ingestion", ({ path }) => Effect.flatMap(CurrentUser, (user) => webhooks.ingestion(user, path.slug)))
  }))
