import type { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, type Effect, type Option } from "effect"
import type { RequestFacts } from "./RequestMeta.js"

/**
 * A read the edge answers itself, after every check it runs for any request (limits, draining, the
 * request target, the CSRF guard) and before the router, without the router's and HttpApi's steps
 * per request (route match and context copies, parameter decoding, the security middleware's
 * service, the group's context merge). Only the common success is answered here: whatever else
 * (a missing or unknown key, any failure) answers None and goes on to the HttpApi route, which
 * runs the same checks again and answers as always. So the route's contract stays the HttpApi
 * definition's (docs/performance.md "Precomputed route").
 */
export interface PrecomputedRoute {
  /** The endpoint's method and path, read from the HttpApi definition. */
  readonly method: string
  readonly path: string
  /** The answer, or None to hand the request to the router; `facts` takes the account for the log line. */
  readonly answer: (
    request: HttpServerRequest.HttpServerRequest,
    facts: RequestFacts
  ) => Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>>
}

/** The precomputed routes by `method path` (the path as CanonicalPath.ts spells it). */
export class PrecomputedRoutes extends Context.Tag("PrecomputedRoutes")<PrecomputedRoutes, ReadonlyMap<string, PrecomputedRoute>>() {}

export const routeKey = (method: string, path: string) => `${method} ${path.toLowerCase()}`
