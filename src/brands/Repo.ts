import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option } from "effect"
import { isUniqueViolation } from "../platform/SqlErrors.js"

/** A brand as stored, with the plan's scan cadence joined in. */
export interface BrandRow {
  readonly id: number
  readonly accountId: number
  readonly slug: string
  readonly name: string
  readonly domain: string
  readonly vertical: string
  readonly primaryRegion: string
  readonly primaryLanguage: string
  readonly aliases: ReadonlyArray<string>
  readonly siteId: string
  readonly scanHours: number
  readonly nextScanAt: Date
  readonly addedAt: Date
  readonly hasDrainSecret: boolean
}

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

export interface CompetitorRow {
  readonly id: number
  readonly name: string
  readonly domain: string
  readonly aliases: ReadonlyArray<string>
  readonly pinned: boolean
  readonly createdAt: Date
}

export interface PromptRow {
  readonly id: string
  readonly num: number
  readonly prompt: string
  readonly topic: string
  readonly intent: string
  readonly source: string
  readonly sourceQuery: string
  readonly createdAt: Date
}

export class SlugTaken {
  readonly _tag = "SlugTaken"
}
export class NameTaken {
  readonly _tag = "NameTaken"
}

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
}

/** What ingestion needs of the brand behind a site id. */
export interface SiteBrand {
  readonly id: number
  readonly accountId: number
  readonly drainSecret: string | null
}

export class BrandsRepo extends Context.Tag("BrandsRepo")<BrandsRepo, BrandsRepoShape>() {}

/** A unique violation becomes the given domain failure; any other SqlError is a defect. */
const failOnUnique = <E>(failure: E) => <A, R>(self: Effect.Effect<A, SqlError, R>): Effect.Effect<A, E, R> =>
  Effect.catchAll(self, (error) => (isUniqueViolation(error.cause) ? Effect.fail(failure) : Effect.die(error)))

const brandColumns = `b.id::int as id, b.account_id::int as "accountId", b.slug, b.name, b.domain, b.vertical,
  b.primary_region as "primaryRegion", b.primary_language as "primaryLanguage", b.aliases, b.site_id::text as "siteId",
  p.scan_hours as "scanHours", b.next_scan_at as "nextScanAt", b.added_at as "addedAt",
  b.drain_secret is not null as "hasDrainSecret"`

export const BrandsRepoLive = Layer.effect(
  BrandsRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(brandColumns)

    const get: BrandsRepoShape["get"] = (accountId, slug) =>
      sql<BrandRow>`
        select ${cols} from brands b join accounts a on a.id = b.account_id join plans p on p.id = a.plan_id
        where b.account_id = ${accountId} and b.slug = ${slug}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie)

    return {
      list: (accountId) =>
        // One query: the plan row always comes back, with the brands (if any) left-joined to it.
        sql<BrandRow & { readonly limit: number; readonly id: number | null }>`
          select p.max_brands as "limit", ${cols}
          from accounts a join plans p on p.id = a.plan_id
          left join brands b on b.account_id = a.id
          where a.id = ${accountId}
          order by b.added_at, b.id`.pipe(
          Effect.map((rows) => ({
            limit: rows[0]?.limit ?? 0,
            brands: rows.filter((row) => row.id !== null)
          })),
          Effect.orDie
        ),
      get,
      count: (accountId) =>
        sql<{ n: number }>`select count(*)::int as n from brands where account_id = ${accountId}`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        ),
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
        sql<CompetitorRow>`
          insert into competitors (account_id, brand_id, name, domain, aliases, pinned, created_at)
          values (${accountId}, ${brandId}, ${input.name}, ${input.domain}, ${input.aliases}, ${input.pinned}, ${input.now})
          returning id::int as id, name, domain, aliases, pinned, created_at as "createdAt"`.pipe(
          failOnUnique(new NameTaken()),
          Effect.map((rows) => rows[0]!)
        ),
      countPrompts: (accountId) =>
        sql<{ n: number }>`select count(*)::int as n from prompts where account_id = ${accountId}`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        ),
      addPrompt: (accountId, brandId, input) =>
        sql<PromptRow>`
          insert into prompts (id, account_id, brand_id, prompt, topic, intent, source, source_query, created_at)
          values (${input.id}, ${accountId}, ${brandId}, ${input.prompt}, ${input.topic}, ${input.intent}, ${input.source},
                  ${input.sourceQuery}, ${input.createdAt})
          returning id::text as id, num, prompt, topic, intent, source, source_query as "sourceQuery", created_at as "createdAt"`.pipe(
          failOnUnique(new NameTaken()),
          Effect.map((rows) => rows[0]!)
        ),
      setDrainSecret: (accountId, brandId, secret) =>
        sql`update brands set drain_secret = ${secret} where id = ${brandId} and account_id = ${accountId}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      findBySiteId: (siteId) =>
        sql<SiteBrand>`
          select id::int as id, account_id::int as "accountId", drain_secret as "drainSecret"
          from brands where site_id = ${siteId}::uuid`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie)
    }
  })
)
