import { Effect, Either, Option, Schema } from "effect"

/**
 * Rows of a SQL query decoded with the row's Schema where they enter the program, instead of a
 * `sql<Row>` type argument the compiler takes on trust. A row that does not match (a column renamed
 * or retyped by a migration, a driver returning a string for a number) is a defect, like a failed
 * statement: the database broke the repository's contract, not the client. Extra columns are ignored.
 *
 *   sql`select ...`.pipe(rows(BrandRow))        every row
 *   sql`select ...`.pipe(firstRow(BrandRow))    Option of the first row
 *   sql`insert ... returning ...`.pipe(singleRow(CompetitorRow))   the one row a statement returns
 */
// The decoders of each row Schema, built once: repositories call rows(...) inside their query
// functions, and a new Schema.Array would compile a new parser for every query.
const arrayDecoders = new WeakMap<Schema.Schema.Any, (raw: unknown) => Either.Either<ReadonlyArray<unknown>, unknown>>()
const rowDecoders = new WeakMap<Schema.Schema.Any, (raw: unknown) => Either.Either<unknown, unknown>>()

const builtOnce = <F>(cache: WeakMap<Schema.Schema.Any, F>, schema: Schema.Schema.Any, build: () => F): F => {
  let decode = cache.get(schema)
  if (decode === undefined) cache.set(schema, decode = build())
  return decode
}

// allow-cast: the cache is keyed by the schema, so the decoder found is the one built for it, which gives A.
const arrayDecoder = <A, I>(schema: Schema.Schema<A, I>) =>
  builtOnce(arrayDecoders, schema, () => Schema.decodeUnknownEither(Schema.Array(schema))) as (
    raw: unknown
  ) => Either.Either<ReadonlyArray<A>, unknown>

// allow-cast: as arrayDecoder's.
const rowDecoder = <A, I>(schema: Schema.Schema<A, I>) =>
  builtOnce(rowDecoders, schema, () => Schema.decodeUnknownEither(schema)) as (raw: unknown) => Either.Either<A, unknown>

export const rows = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = arrayDecoder(schema)
  return <E, R>(self: Effect.Effect<ReadonlyArray<unknown>, E, R>): Effect.Effect<ReadonlyArray<A>, E, R> =>
    Effect.flatMap(self, (raw) => Either.match(decode(raw), { onLeft: Effect.die, onRight: Effect.succeed }))
}

export const firstRow = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = rowDecoder(schema)
  return <E, R>(self: Effect.Effect<ReadonlyArray<unknown>, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
    Effect.flatMap(self, (raw) =>
      raw.length === 0
        ? Effect.succeed(Option.none())
        : Either.match(decode(raw[0]), { onLeft: Effect.die, onRight: (row) => Effect.succeed(Option.some(row)) }))
}

export const singleRow = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = rowDecoder(schema)
  return <E, R>(self: Effect.Effect<ReadonlyArray<unknown>, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(self, (raw) =>
      raw.length === 0
        ? Effect.dieMessage("the statement returned no row")
        : Either.match(decode(raw[0]), { onLeft: Effect.die, onRight: Effect.succeed }))
}

/** `count(*)::int as n` and its kin: the number in column `n` of the first row, 0 without a row. */
const CountRow = Schema.Struct({ n: Schema.Number })
export const countOf = <E, R>(self: Effect.Effect<ReadonlyArray<unknown>, E, R>): Effect.Effect<number, E, R> =>
  Effect.map(firstRow(CountRow)(self), Option.match({ onNone: () => 0, onSome: (row) => row.n }))
