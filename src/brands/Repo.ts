import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { countOf, firstRow, rows, singleRow } from "../platform/Rows.js"
import { isUniqueViolation } from "../platform/SqlErrors.js"

/** A brand as stored, with the plan's scan cadence joined in. */
export const BrandRow = Schema.Struct({
  id: Schema.Number,
  accountId: Schema.Number,
  slug: Schema.String,
  name: Schema.String,
  domain: Schema.String,
  vertical: Schema.String,
  primaryRegion: Schema.String,
  primaryLanguage: Schema.String,
  aliases: Schema.Array(Schema.String),
  siteId: Schema.String,
  scanHours: Schema.Number,
  nextScanAt: Schema.DateFromSelf,
  addedAt: Schema.DateFromSelf,
  /** The drain's HMAC secret (docs/ingestion.md), never in an answer: the brand views leave it out. */
  drainSecret: Schema.NullOr(Schema.String)
})
export type BrandRow = typeof BrandRow.Type

export interface NewBrand {
  readonly accountId: number
  readonly slug: string
  readonly name: string
  readonly domain: string
  readonly vertical: string
  readonly primaryRegion: string
  readonly primaryLanguage: string
  readonly aliases: ReadonlyArray<string>
  readonly siteId: string
  readonly now: Date
}

export const CompetitorRow = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  domain: Schema.String,
  aliases: Schema.Array(Schema.String),
  pinned: Schema.Boolean,
  createdAt: Schema.DateFromSelf
})
export type CompetitorRow = typeof CompetitorRow.Type

export const PromptRow = Schema.Struct({
  id: Schema.String,
  num: Schema.Number,
  prompt: Schema.String,
  topic: Schema.String,
  intent: Schema.String,
  source: Schema.String,
  sourceQuery: Schema.String,
  createdAt: Schema.DateFromSelf
})
export type PromptRow = typeof PromptRow.Type

export class SlugTaken extends Schema.TaggedError<SlugTaken>()("SlugTaken", {}) {}
export class NameTaken extends Schema.TaggedError<NameTaken>()("NameTaken", {}) {}

/** Every method takes the account id from the authenticated context and filters by it. */
export interface BrandsRepoShape {
  /** The account's brands (oldest first) and its plan's brand cap, in one round trip. */
  readonly list: (accountId: number) => Effect.Effect<{ readonly brands: ReadonlyArray<BrandRow>; readonly limit: number }>
  readonly get: (accountId: number, slug: string) => Effect.Effect<Option.Option<BrandRow>>
  readonly count: (accountId: number) => Effect.Effect<number>
  readonly insert: (brand: NewBrand) => Effect.Effect<BrandRow, SlugTaken>
  readonly addCompetitor: (
    accountId: number,
    brandId: number,
    input: { readonly name: string; readonly domain: string; readonly aliases: ReadonlyArray<string>; readonly pinned: boolean; readonly now: Date }
  ) => Effect.Effect<CompetitorRow, NameTaken>
  /** The brand's tracked competitors, oldest first. */
  readonly competitors: (accountId: number, brandId: number) => Effect.Effect<ReadonlyArray<CompetitorRow>>
  readonly countPrompts: (accountId: number) => Effect.Effect<number>
  readonly addPrompt: (
    accountId: number,
    brandId: number,
    input: Omit<PromptRow, "num">
  ) => Effect.Effect<PromptRow, NameTaken>
  readonly setDrainSecret: (accountId: number, brandId: number, secret: string | null) => Effect.Effect<void>
  /**
   * The brand of a public site id, whatever its account (the one lookup not filtered by account:
   * ingestion must tell an unknown site, 404, from another account's, 403). `siteId` must be a UUID.
   */
  readonly findBySiteId: (siteId: string) => Effect.Effect<Option.Option<SiteBrand>>
  /** The slugs of these brands (each named with its account); brands that do not exist are left out. */
  readonly slugs: (brands: ReadonlyArray<BrandKey>) => Effect.Effect<ReadonlyArray<BrandSlug>>
}

/** A brand named by its account and id. */
export interface BrandKey {
  readonly accountId: number
  readonly brandId: number
}
export const BrandSlug = Schema.Struct({ brandId: Schema.Number, slug: Schema.String })
export type BrandSlug = typeof BrandSlug.Type

/** What ingestion needs of the brand behind a site id. */
export const SiteBrand = Schema.Struct({ id: Schema.Number, accountId: Schema.Number, drainSecret: Schema.NullOr(Schema.String) })
export type SiteBrand = typeof SiteBrand.Type

export class BrandsRepo extends Context.Tag("BrandsRepo")<BrandsRepo, BrandsRepoShape>() {}

/** A unique violation becomes the given domain failure; any other SqlError is a defect. */
const failOnUnique = <E>(failure: E) => <A, R>(self: Effect.Effect<A, SqlError, R>): Effect.Effect<A, E, R> =>
  Effect.catchAll(self, (error) => (isUniqueViolation(error.cause) ? Effect.fail(failure) : Effect.die(error)))

const brandColumns = `b.id::int as id, b.account_id::int as "accountId", b.slug, b.name, b.domain, b.vertical,
  b.primary_region as "primaryRegion", b.primary_language as "primaryLanguage", b.aliases, b.site_id::text as "siteId",
  p.scan_hours as "scanHours", b.next_scan_at as "nextScanAt", b.added_at as "addedAt",
  b.drain_secret as "drainSecret"`

/** A row of the list: a brand with its plan's cap, or the cap alone (an account without brands). */
const BrandListRow = Schema.extend(BrandRow, Schema.Struct({ limit: Schema.Number }))
const ListRow = Schema.Union(BrandListRow, Schema.Struct({ limit: Schema.Number, id: Schema.Null }))

export const BrandsRepoLive = Layer.effect(
  BrandsRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(brandColumns)

    const get: BrandsRepoShape["get"] = (accountId, slug) =>
      sql`
        select ${cols} from brands b join accounts a on a.id = b.account_id join plans p on p.id = a.plan_id
        where b.account_id = ${accountId} and b.slug = ${slug}`.pipe(firstRow(BrandRow), Effect.orDie)

    return {
      list: (accountId) =>
        // One query: the plan row always comes back, with the brands (if any) left-joined to it.
        sql`
          select p.max_brands as "limit", ${cols}
          from accounts a join plans p on p.id = a.plan_id
          left join brands b on b.account_id = a.id
          where a.id = ${accountId}
          order by b.added_at, b.id`.pipe(
          rows(ListRow),
          Effect.map((found) => ({
            limit: found[0]?.limit ?? 0,
            brands: found.filter((row): row is typeof BrandListRow.Type => row.id !== null)
          })),
          Effect.orDie
        ),
      get,
      competitors: (accountId, brandId) =>
        sql`
          select id::int as id, name, domain, aliases, pinned, created_at as "createdAt" from competitors
          where account_id = ${accountId} and brand_id = ${brandId} order by created_at, id`.pipe(rows(CompetitorRow), Effect.orDie),
      count: (accountId) =>
        sql`select count(*)::int as n from brands where account_id = ${accountId}`.pipe(countOf, Effect.orDie),
      insert: (brand) =>
        sql`
          insert into brands (account_id, slug, name, domain, vertical, primary_region, primary_language, aliases, site_id, next_scan_at, added_at)
          values (${brand.accountId}, ${brand.slug}, ${brand.name}, ${brand.domain}, ${brand.vertical}, ${brand.primaryRegion},
                  ${brand.primaryLanguage}, ${brand.aliases}, ${brand.siteId}, ${brand.now}, ${brand.now})`.pipe(
          failOnUnique(new SlugTaken()),
          Effect.zipRight(get(brand.accountId, brand.slug)),
          Effect.flatMap(Option.match({
            onNone: () => Effect.dieMessage("inserted brand not found"),
            onSome: Effect.succeed
          }))
        ),
      addCompetitor: (accountId, brandId, input) =>
        sql`
          insert into competitors (account_id, brand_id, name, domain, aliases, pinned, created_at)
          values (${accountId}, ${brandId}, ${input.name}, ${input.domain}, ${input.aliases}, ${input.pinned}, ${input.now})
          returning id::int as id, name, domain, aliases, pinned, created_at as "createdAt"`.pipe(
          failOnUnique(new NameTaken()),
          singleRow(CompetitorRow)
        ),
      countPrompts: (accountId) =>
        sql`select count(*)::int as n from prompts where account_id = ${accountId}`.pipe(countOf, Effect.orDie),
      addPrompt: (accountId, brandId, input) =>
        sql`
          insert into prompts (id, account_id, brand_id, prompt, topic, intent, source, source_query, created_at)
          values (${input.id}, ${accountId}, ${brandId}, ${input.prompt}, ${input.topic}, ${input.intent}, ${input.source},
                  ${input.sourceQuery}, ${input.createdAt})
          returning id::text as id, num, prompt, topic, intent, source, source_query as "sourceQuery", created_at as "createdAt"`.pipe(
          failOnUnique(new NameTaken()),
          singleRow(PromptRow)
        ),
      setDrainSecret: (accountId, brandId, secret) =>
        sql`update brands set drain_secret = ${secret} where id = ${brandId} and account_id = ${accountId}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      findBySiteId: (siteId) =>
        sql`
          select id::int as id, account_id::int as "accountId", drain_secret as "drainSecret"
          from brands where site_id = ${siteId}::uuid`.pipe(firstRow(SiteBrand), Effect.orDie),
      slugs: (brands) =>
        brands.length === 0 ? Effect.succeed([]) : sql`
          select b.id::int as "brandId", b.slug
          from unnest(${brands.map((b) => b.accountId)}::bigint[], ${brands.map((b) => b.brandId)}::int[]) as k(account_id, id)
          join brands b on b.account_id = k.account_id and b.id = k.id`.pipe(rows(BrandSlug), Effect.orDie)
    }
  })
)
