import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailableError } from "./HttpErrors.js"

/** Operational endpoints outside both APIs' prefixes. */
export class SystemGroup extends HttpApiGroup.make("system", { topLevel: true })
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok"), database: Schema.String }))
      .addError(ServiceUnavailableError)
  )
  .add(HttpApiEndpoint.get("openapi", "/api/public/v1/openapi.json").addSuccess(Schema.Unknown))
  .add(HttpApiEndpoint.get("dashboardOpenapi", "/api/v1/openapi.json").addSuccess(Schema.Unknown))
{}
