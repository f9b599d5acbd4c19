import { describe, expect, it } from "bun:test"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, HttpServer } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import { ServerApi } from "../../src/api.js"
import { apiErrorTags, guardedApp } from "../../src/platform/Edge.js"
import {
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  PayloadTooLarge,
  PlanLimitReached,
  QuotaExceeded,
  Unauthorized
} from "../../src/platform/HttpErrors.js"

/**
 * The edge tells a declared API error (HttpApi answers it with its own status) from a defect
 * (500) by the tags the API definition declares, not by a list kept by hand: an error class
 * defined tomorrow and added to an endpoint passes through with its status the day it is added.
 */

// Defined here and nowhere in src/: the edge has never heard of it.
class Teapot extends Schema.TaggedError<Teapot>()("Teapot", { error: Schema.String }, HttpApiSchema.annotations({ status: 418 })) {}

const TeaGroup = HttpApiGroup.make("tea")
  .add(HttpApiEndpoint.get("brew", "/brew").addSuccess(Schema.String).addError(Teapot))
class TeaApi extends HttpApi.make("tea").add(TeaGroup) {}

const TeaHandlers = HttpApiBuilder.group(TeaApi, "tea", (handlers) =>
  handlers.handle("brew", () => Effect.fail(new Teapot({ error: "I'm a teapot" }))))

const serve = async (tags: ReadonlySet<string>) => {
  const { handler, dispose } = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(
      HttpApiBuilder.api(TeaApi).pipe(Layer.provide(TeaHandlers)),
      HttpApiBuilder.middleware((app) => guardedApp(app, tags)),
      HttpServer.layerContext
    )
  )
  try {
    const response = await handler(new Request("http://localhost/brew"))
    return { status: response.status, body: await response.json() }
  } finally {
    await dispose()
  }
}

describe("the edge's list of API errors comes from the API definition", () => {
  it("a newly defined error class, declared on an endpoint, passes through with its own status and body", async () => {
    const tags = apiErrorTags(TeaApi)
    expect(tags.has("Teapot")).toBe(true)
    expect(await serve(tags)).toEqual({ status: 418, body: { _tag: "Teapot", error: "I'm a teapot" } })
  })

  it("the same failure, unknown to the edge, would have been a defect: the list is what decides", async () => {
    expect(await serve(new Set())).toEqual({ status: 500, body: { error: "internal error" } })
  })

  it("the served API's list holds the errors its endpoints declare", () => {
    const tags = apiErrorTags(ServerApi)
    for (const cls of [BadRequest, Unauthorized, PlanLimitReached, Forbidden, NotFound, Conflict, PayloadTooLarge, QuotaExceeded]) {
      expect([cls._tag, tags.has(cls._tag)]).toEqual([cls._tag, true])
    }
    expect(tags.has("Teapot")).toBe(false)
  })
})
