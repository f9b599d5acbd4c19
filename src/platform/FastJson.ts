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

const utf8 = new TextEncoder()

/** A value in a schema's wire form as its JSON body (the bytes encodedJson would send), to keep. */
export const encodedJsonBytes = <S extends Schema.Schema.Any>(_schema: S, body: Schema.Schema.Encoded<S>): Uint8Array =>
  utf8.encode(JSON.stringify(body))

/** A 200 JSON response of bytes from encodedJsonBytes: the same response as encodedJson of the value. */
export const jsonBytesResponse = (bytes: Uint8Array) => HttpServerResponse.uint8Array(bytes, { contentType: "application/json" })
