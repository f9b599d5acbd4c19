import { HttpApi, HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpRouter } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { ServerApi } from "../api.js"

/**
 * The served application, callable in process: the dashboard twins and the MCP tools run
 * a request through the very same HttpApp a client reaches over HTTP (routes, auth
 * middlewares, edge middleware, error encoding), so they answer the same status and body.
 */
export interface InProcessAppShape {
  /** Runs one request (a path with its query string, relative to the server root) through the app. */
  readonly run: (request: {
    readonly method: "GET"
    readonly url: string
    readonly headers?: Record<string, string>
    /** The origin the request is addressed to (default http://localhost): what the endpoint reads as its own URL. */
    readonly origin?: string
  }) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpRouter.HttpRouter.DefaultServices>
}

export class InProcessApp extends Context.Tag("InProcessApp")<InProcessApp, InProcessAppShape>() {}

/** The outcome of an in-process request: status and the parsed JSON body (the body text when not JSON). */
export const readJson = (response: HttpServerResponse.HttpServerResponse) =>
  Effect.promise(async () => {
    const web = HttpServerResponse.toWeb(response)
    const text = await web.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: web.status, body }
  })

/**
 * Built lazily at the first request: by then every group and route has been added to the
 * router the server serves (the same Router and Middleware instances, memoized by layer).
 * It needs no group's handlers to be built (ServerApi declares no API-wide middleware), so a
 * group may itself call the app in process (the dashboard twins) without a cycle of layers.
 */
export const InProcessAppLive = Layer.effect(
  InProcessApp,
  Effect.gen(function*() {
    const context = yield* Effect.context<HttpApiBuilder.Router | HttpApiBuilder.Middleware>()
    // What HttpApiBuilder.api(ServerApi) would hold, without requiring the groups' handlers. The cast is
    // kept: the platform erases the API's type the same way there (`api as any`), because no precise
    // HttpApi type is assignable to the erased form the service holds; it widens our own constant.
    // allow-cast: ServerApi to the erased API of HttpApi.Api, as HttpApiBuilder.api does.
    const api = HttpApi.Api.of({ api: ServerApi as unknown as Context.Tag.Service<HttpApi.Api>["api"], context })
    const app = yield* Effect.cached(HttpApiBuilder.httpApp.pipe(Effect.provide(context), Effect.provideService(HttpApi.Api, api)))
    return InProcessApp.of({
      run: ({ headers, method, origin, url }) =>
        Effect.flatMap(app, (httpApp) =>
          httpApp.pipe(
            Effect.provideService(
              HttpServerRequest.HttpServerRequest,
              HttpServerRequest.fromWeb(new Request(`${origin ?? "http://localhost"}${url}`, { method, headers: headers ?? {} }))
            ),
            Effect.scoped
          ))
    })
  })
).pipe(Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]))
