import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentUser } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { RATE_LIMITED } from "../platform/RateLimiter.js"
import { TestRateLimited } from "./Api.js"
import { type TestThrottled, Webhooks } from "./Webhooks.js"

/** A throttled test ping: 429 with Retry-After and the RateLimit headers, as the other limits answer. */
const throttled = (t: TestThrottled) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, {
        "retry-after": String(t.retryAfterSeconds),
        "ratelimit-limit": String(t.limit),
        "ratelimit-remaining": "0",
        "ratelimit-reset": String(t.retryAfterSeconds)
      }))
    ),
    Effect.fail(new TestRateLimited({ error: RATE_LIMITED }))
  )

export const WebhooksHttpLive = HttpApiBuilder.group(ServerApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const account = Effect.map(CurrentUser, (user) => user.accountId)
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(account, (id) => webhooks.create(id, payload)))
      .handle("list", () => Effect.flatMap(account, webhooks.list))
      .handle("update", ({ path, payload }) => Effect.flatMap(account, (id) => webhooks.update(id, path.id, payload)))
      .handle("remove", ({ path }) => Effect.flatMap(account, (id) => webhooks.remove(id, path.id)))
      .handle("test", ({ path }) => Effect.flatMap(account, (id) => webhooks.test(id, path.id)).pipe(Effect.catchTag("TestThrottled", throttled)))
      .handle("rotate", ({ path }) => Effect.flatMap(account, (id) => webhooks.rotate(id, path.id)))
      .handle("deliveries", ({ path }) => Effect.flatMap(account, (id) => webhooks.deliveries(id, path.id)))
      .handle("retry", ({ path }) => Effect.flatMap(account, (id) => webhooks.retry(id, path.id, path.delivery_id)))
      .handle("events", () => Effect.flatMap(account, webhooks.events))
      .handle("ingestion", ({ path }) => Effect.flatMap(CurrentUser, (user) => webhooks.ingestion(user, path.slug)))
  }))
