import { HttpServerResponse } from "@effect/platform"
import type { Schema } from "effect"

/**
 * A 200 JSON response from a value already in a schema's wire (Encoded) form. HttpApi
 * would otherwise re-encode the handler's value through a union of every success schema
 * on each request; on hot read paths the service builds the Encoded shape directly and
 * the compiler checks it against the same schema that OpenAPI and the client use.
 */
export const encodedJson = <S extends Schema.Schema.Any>(_schema: S, body: Schema.Schema.Encoded<S>) =>
  HttpServerResponse.unsafeJson(body)
