import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "bun:test"
import { Effect, Layer, Schema } from "effect"
import { arrayLiteral, SqlMemory, sqlServer } from "../../src/platform/Sql.js"
import { databaseBackends, serverSchemaUrl } from "../helpers/app.js"

// Bulk inserts pass their columns as arrays; on the server back end the client writes them as
// PostgreSQL array literals through JSON.stringify. What reaches the database must be exactly what
// was given, whichever way an array goes.

describe("arrayLiteral", () => {
  it("writes strings, numbers, booleans and nulls as the literal PostgreSQL reads", () => {
    expect(arrayLiteral([])).toBe("{}")
    expect(arrayLiteral(["a", "b c", ""])).toBe(`{"a","b c",""}`)
    expect(arrayLiteral(['say "hi"', "back\\slash", "{,}", "NULL"])).toBe(`{"say \\"hi\\"","back\\\\slash","{,}","NULL"}`)
    expect(arrayLiteral([1, -0, 2.5, 1e21, null])).toBe("{1,0,2.5,1e+21,null}")
    expect(arrayLiteral([true, false, null])).toBe("{true,false,null}")
    expect(arrayLiteral(["émoji 😀", "日本"])).toBe(`{"émoji 😀","日本"}`)
    // A backslash followed by n is two characters, not a line break.
    expect(arrayLiteral(["\\n", "\\\\", '\\"'])).toBe(`{"\\\\n","\\\\\\\\","\\\\\\""}`)
  })

  it("leaves to pg what JSON would escape otherwise than PostgreSQL, and what is not flat", () => {
    for (
      const values of [
        ["line\nbreak"],
        ["tab\there"],
        ["nul\u0000"],
        ["lone \ud800 surrogate"],
        [Number.NaN],
        [Number.POSITIVE_INFINITY],
        [new Date(0)],
        [["nested"]],
        [1n],
        [undefined],
        [{ a: 1 }]
      ] as ReadonlyArray<ReadonlyArray<unknown>>
    ) expect(arrayLiteral(values)).toBeUndefined()
  })
})

/** Values the literal carries (arrayLiteral gives one for them all). */
const LITERAL = ["plain", "", 'say "hi"', "back\\slash", "ends with \\", '\\"', "\\n", "{,}", "NULL", "null", "  spaced  ", "émoji 😀", "\u2028"]
/** Values pg writes (a control character, a lone surrogate). */
const PG_WAY = ["line\nbreak", "tab\there", "lone \ud800 surrogate", 'mixed \\ "quote"\n']

const Texts = Schema.Array(Schema.NullOr(Schema.String))
const Out = Schema.Struct({ texts: Texts, others: Texts, numbers: Schema.Array(Schema.NullOr(Schema.Number)), flags: Schema.Array(Schema.NullOr(Schema.Boolean)) })

describe.each(databaseBackends())("arrays as statement values (%s)", (backend) => {
  it("reach the database exactly as given", async () => {
    const layer = backend === "postgres" ? sqlServer(await serverSchemaUrl(process.env.TEST_DATABASE_URL!)) : SqlMemory
    const texts = [...LITERAL, null]
    const others = [...PG_WAY, null]
    expect(arrayLiteral(texts)).toBeString()
    expect(arrayLiteral(others)).toBeUndefined()
    const numbers = [0, 1, -1.5, 1700000000123.25, 32767, null]
    const flags = [true, false, null]
    const out = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`select ${texts}::text[] as texts, ${others}::text[] as others, ${numbers}::float8[] as numbers, ${flags}::bool[] as flags`
        return Schema.decodeUnknownSync(Out)(rows[0])
      }).pipe(Effect.provide(Layer.orDie(layer)), Effect.scoped)
    )
    // A lone surrogate cannot be sent as UTF-8: it arrives as U+FFFD, as pg has always sent it.
    expect(out.texts).toEqual(texts)
    expect(out.others).toEqual(others.map((t) => (t === null ? null : t.replace(/\ud800/g, "\ufffd"))))
    expect(out.numbers).toEqual(numbers)
    expect(out.flags).toEqual(flags)
  })
})
