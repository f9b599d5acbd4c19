import { Context, Effect, Layer, Option } from "effect"
import { Accounts, AccountsLive } from "../accounts/Accounts.js"
import {
  badRequest,
  conflict,
  forbidden,
  notFound,
  PlanLimitReached,
  type BadRequest,
  type Conflict,
  type Forbidden,
  type NotFound
} from "../platform/HttpErrors.js"
import { AppConfig } from "../platform/Config.js"
import { accountCache, Invalidations, InvalidationsLive } from "../platform/Invalidations.js"
import { LANGUAGE_RULE, languageCode, REGION_RULE, regionCode } from "../platform/Schemas.js"
import { now } from "../platform/Time.js"
import { BRAND_LIMITS, type Brand, type PROMPT_INTENTS, type PROMPT_SOURCES } from "./Api.js"
import { slugFromName } from "./Slug.js"
import { type BrandKey, BrandsRepo, type BrandRow, type CompetitorRow, PromptRow, type SiteBrand } from "./Repo.js"

export type { SiteBrand }
/**
 * The stored shapes other domains receive from this service (they never import the repository);
 * PromptRow with its Schema, which decodes the prompts the visibility reads select themselves.
 */
export type { BrandKey, BrandRow, CompetitorRow }
export { PromptRow }

/** The Brand resource of the OpenAPI document, as the service gives it (dates as Dates). */
export type BrandView = Brand

export const brandView = (row: BrandRow): BrandView => ({
  id: row.id,
  brand_slug: row.slug,
  brand_name: row.name,
  domain: row.domain,
  vertical: row.vertical,
  scan_frequency_hours: row.scanHours,
  next_scan_at: row.nextScanAt,
  site_id: row.siteId,
  added_at: row.addedAt
})

/** The same Brand in its JSON (Encoded) form: dates as ISO 8601 strings. */
export const brandWire = (brand: BrandView): typeof Brand.Encoded => ({
  ...brand,
  next_scan_at: brand.next_scan_at.toISOString(),
  added_at: brand.added_at.toISOString()
})

export const promptView = (row: PromptRow) => ({
  id: row.id,
  prompt: row.prompt,
  topic: row.topic,
  intent: row.intent,
  created_at: row.createdAt,
  source: row.source,
  source_query: row.sourceQuery
})

export const competitorView = (row: CompetitorRow) => ({
  id: row.id,
  name: row.name,
  domain: row.domain,
  aliases: row.aliases,
  pinned: row.pinned,
  created_at: row.createdAt
})

/**
 * A hostname from what a user typed: "acme.com", "https://www.acme.com/x" or "Acme.COM."
 * all give "acme.com" (a leading www. is not part of the brand's domain for matching).
 */
export const normalizeDomain = (input: string): Option.Option<string> => {
  const trimmed = input.trim()
  if (trimmed === "" || trimmed.length > 2048) return Option.none()
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`
  let host: string
  try {
    host = new URL(withScheme).hostname.toLowerCase()
  } catch {
    return Option.none()
  }
  host = host.replace(/\.$/, "").replace(/^www\./, "")
  if (!/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(host)) {
    return Option.none()
  }
  return Option.some(host)
}

/** Aliases trimmed, each at most BRAND_LIMITS.alias characters (the API refuses longer; other callers are cut). */
const cleanAliases = (aliases: ReadonlyArray<string> | undefined) =>
  Array.from(new Set((aliases ?? []).map((alias) => alias.trim().slice(0, BRAND_LIMITS.alias)).filter((alias) => alias !== "")))

const TOO_MANY_ALIASES = badRequest(`invalid aliases: at most ${BRAND_LIMITS.aliases} aliases`)
const TOO_MANY_COMPETITORS = badRequest(`invalid request: a brand tracks at most ${BRAND_LIMITS.competitors} competitors`)

/** An account's brands (oldest first) with its plan's cap. */
export interface BrandList {
  readonly brands: ReadonlyArray<BrandView>
  readonly count: number
  readonly limit: number
}

export interface BrandsShape {
  /**
   * list, get, row and rows read the account's brands from memory while the invalidation channel is
   * live (docs/decisions.md "Brands, competitors, prompts").
   */
  readonly list: (accountId: number) => Effect.Effect<BrandList>
  readonly get: (accountId: number, slug: string) => Effect.Effect<BrandView, NotFound>
  /** The stored row, for other domains that need a brand's full record. */
  readonly row: (accountId: number, slug: string) => Effect.Effect<BrandRow, NotFound>
  /** The account's stored brands, oldest first (the primary brand first). */
  readonly rows: (accountId: number) => Effect.Effect<ReadonlyArray<BrandRow>>
  /** A brand's tracked competitors, oldest first. */
  readonly competitors: (accountId: number, brandId: number) => Effect.Effect<ReadonlyArray<CompetitorRow>>
  readonly create: (
    accountId: number,
    input: {
      /** Left out: made from the name (Slug.ts); a 400 when the name has nothing to make it from. */
      readonly brand_slug?: string | undefined
      readonly brand_name: string
      readonly domain: string
      readonly vertical: string
      readonly primary_region?: string | undefined
      readonly primary_language?: string | undefined
      readonly aliases?: ReadonlyArray<string> | undefined
    }
  ) => Effect.Effect<BrandView, BadRequest | Conflict | PlanLimitReached>
  readonly addCompetitor: (
    accountId: number,
    slug: string,
    input: { readonly name: string; readonly domain: string; readonly aliases?: ReadonlyArray<string> | undefined; readonly pinned?: boolean | undefined }
  ) => Effect.Effect<ReturnType<typeof competitorView>, BadRequest | Conflict | NotFound>
  readonly addPrompt: (
    accountId: number,
    slug: string,
    input: {
      readonly prompt: string
      readonly topic?: string | undefined
      readonly intent?: (typeof PROMPT_INTENTS)[number] | undefined
      readonly source?: (typeof PROMPT_SOURCES)[number] | undefined
      readonly source_query?: string | undefined
    }
  ) => Effect.Effect<ReturnType<typeof promptView>, BadRequest | Conflict | NotFound | PlanLimitReached>
  readonly setDrainSecret: (accountId: number, slug: string, secret: string | null | undefined) => Effect.Effect<void, NotFound>
  /** The brand of an ingestion site_id: 404 unknown (or not a UUID), 403 another account's (the OpenAPI document). */
  readonly bySiteId: (accountId: number, siteId: string) => Effect.Effect<SiteBrand, NotFound | Forbidden>
  /** The brand of a public site_id (the tag's), whatever the account; None when unknown or not a site id. */
  readonly findSite: (siteId: string) => Effect.Effect<Option.Option<SiteBrand>>
  /** The slugs of these brands by brand id (the alerts name brands by slug); unknown brands are left out. */
  readonly slugs: (brands: ReadonlyArray<BrandKey>) => Effect.Effect<ReadonlyMap<number, string>>
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A brand's site id is a UUID (any case): the one check, for every place a site_id arrives. */
export const isSiteId = (siteId: string): boolean => UUID.test(siteId)
const SITE_NOT_FOUND = notFound("unknown site_id")
const SITE_FOREIGN = forbidden("site_id not owned by this account")

export class Brands extends Context.Tag("Brands")<Brands, BrandsShape>() {}

const BRAND_NOT_FOUND = notFound("brand not found")
/** Approximate bytes of a string held in memory (UTF-16, with its header). */
const textBytes = (text: string | null): number => (text === null ? 0 : 24 + 2 * text.length)

/**
 * Approximate bytes an account's cached brands hold: each row's texts, and a fixed part for the row,
 * its view, its site entry and their dates. The cache is bounded by the sum (BRAND_CACHE_BYTES).
 */
export const cachedBrandsBytes = (rows: ReadonlyArray<BrandRow>): number => {
  let bytes = 256
  for (const row of rows) {
    bytes += 1024 + textBytes(row.slug) + textBytes(row.name) + textBytes(row.domain) + textBytes(row.vertical) +
      textBytes(row.primaryRegion) + textBytes(row.primaryLanguage) + textBytes(row.siteId) + textBytes(row.drainSecret)
    for (const alias of row.aliases) bytes += 8 + textBytes(alias)
  }
  return bytes
}

/** An account's brands as stored (other domains' reads), as listed (the API's) and by site id (ingestion's). */
interface CachedBrands {
  readonly rows: ReadonlyArray<BrandRow>
  readonly list: BrandList
  readonly sites: ReadonlyMap<string, SiteBrand>
}

export const BrandsLive = Layer.effect(
  Brands,
  Effect.gen(function*() {
    const repo = yield* BrandsRepo
    const accounts = yield* Accounts
    const invalidations = yield* Invalidations
    const config = yield* AppConfig

    // Each account's brands as stored and as listed, read by GET /brands, GET /brands/{slug} and every
    // brand-scoped read (row, rows, bySiteId): every change to what they hold notifies the invalidation
    // channel at its commit, whoever makes it (migrations/0016_account_cache_invalidation.sql).
    const accountsBrands = accountCache<CachedBrands>(invalidations, config.cacheBytes.brands, (cached) => cachedBrandsBytes(cached.rows))

    const brandsOf = (accountId: number): Effect.Effect<CachedBrands> =>
      accountsBrands.read(
        accountId,
        Effect.map(repo.list(accountId), ({ brands, limit }) => ({
          rows: brands,
          list: { brands: brands.map(brandView), count: brands.length, limit },
          sites: new Map(brands.map((brand) => [brand.siteId, { id: brand.id, accountId: brand.accountId, drainSecret: brand.drainSecret }]))
        }))
      )

    /**
     * After a change to an account's brands made here: gone from this process's cache at once, and
     * from every other process's before the change answers (its trigger's notification confirmed).
     */
    const brandsChanged = (accountId: number) =>
      Effect.suspend(() => {
        accountsBrands.drop(accountId)
        return invalidations.barrier
      })

    const row: BrandsShape["row"] = (accountId, slug) =>
      Effect.flatMap(brandsOf(accountId), ({ rows }) => {
        const found = rows.find((candidate) => candidate.slug === slug)
        return found === undefined ? Effect.fail(BRAND_NOT_FOUND) : Effect.succeed(found)
      })

    const planLimit = (plan: { id: string }, count: number, limit: number, what: string) =>
      new PlanLimitReached({
        error: "plan_limit_reached",
        plan: plan.id,
        count,
        limit,
        hint: `The ${plan.id} plan allows ${limit} ${what}. Upgrade your plan to add more.`
      })

    return {
      list: (accountId) => Effect.map(brandsOf(accountId), (cached) => cached.list),
      get: (accountId, slug) => Effect.map(row(accountId, slug), brandView),
      row,
      rows: (accountId) => Effect.map(brandsOf(accountId), (cached) => cached.rows),
      competitors: repo.competitors,
      create: (accountId, input) =>
        Effect.gen(function*() {
          const name = input.brand_name.trim()
          if (name === "") return yield* Effect.fail(badRequest("brand_name required"))
          const slug = input.brand_slug ?? slugFromName(name)
          if (slug === null) {
            return yield* Effect.fail(badRequest("brand_slug required: the brand name has no Latin letters or digits to make one from"))
          }
          const domain = normalizeDomain(input.domain)
          if (Option.isNone(domain)) return yield* Effect.fail(badRequest("invalid url"))
          const region = regionCode(input.primary_region?.trim() || "US")
          const language = languageCode(input.primary_language?.trim() || "en")
          if (region === undefined) return yield* Effect.fail(badRequest(`invalid primary_region: ${REGION_RULE}`))
          if (language === undefined) return yield* Effect.fail(badRequest(`invalid primary_language: ${LANGUAGE_RULE}`))
          const aliases = cleanAliases(input.aliases)
          if (aliases.length > BRAND_LIMITS.aliases) return yield* Effect.fail(TOO_MANY_ALIASES)
          return yield* accounts.withAccountLock(
            accountId,
            Effect.gen(function*() {
              const [plan, count] = yield* Effect.all([accounts.planOf(accountId), repo.count(accountId)])
              if (count >= plan.maxBrands) return yield* Effect.fail(planLimit(plan, count, plan.maxBrands, "brands"))
              const created = yield* repo.insert({
                accountId,
                slug,
                name: name.slice(0, BRAND_LIMITS.name),
                domain: domain.value,
                vertical: input.vertical,
                primaryRegion: region,
                primaryLanguage: language,
                aliases,
                siteId: crypto.randomUUID(),
                now: yield* now
              }).pipe(Effect.catchTag("SlugTaken", () => Effect.fail(conflict("brand_slug already exists"))))
              return brandView(created)
            })
          ).pipe(Effect.tap(() => brandsChanged(accountId)))
        }),
      addCompetitor: (accountId, slug, input) =>
        Effect.gen(function*() {
          const brand = yield* row(accountId, slug)
          const name = input.name.trim()
          if (name === "") return yield* Effect.fail(badRequest("name required"))
          const domain = normalizeDomain(input.domain)
          if (Option.isNone(domain)) return yield* Effect.fail(badRequest("invalid url"))
          const aliases = cleanAliases(input.aliases)
          if (aliases.length > BRAND_LIMITS.aliases) return yield* Effect.fail(TOO_MANY_ALIASES)
          // Counted and added under the account's lock, so concurrent adds cannot pass the bound together.
          return yield* accounts.withAccountLock(
            accountId,
            Effect.gen(function*() {
              const tracked = yield* repo.competitors(accountId, brand.id)
              if (tracked.length >= BRAND_LIMITS.competitors) return yield* Effect.fail(TOO_MANY_COMPETITORS)
              const created = yield* repo.addCompetitor(accountId, brand.id, {
                name: name.slice(0, BRAND_LIMITS.name),
                domain: domain.value,
                aliases,
                pinned: input.pinned ?? false,
                now: yield* now
              }).pipe(Effect.catchTag("NameTaken", () => Effect.fail(conflict("competitor already exists"))))
              return competitorView(created)
            })
          )
        }),
      addPrompt: (accountId, slug, input) =>
        Effect.gen(function*() {
          const brand = yield* row(accountId, slug)
          const text = input.prompt.trim()
          if (text === "") return yield* Effect.fail(badRequest("prompt required"))
          if (text.length > BRAND_LIMITS.prompt) {
            return yield* Effect.fail(badRequest(`invalid prompt: at most ${BRAND_LIMITS.prompt} characters`))
          }
          return yield* accounts.withAccountLock(
            accountId,
            Effect.gen(function*() {
              const [plan, count] = yield* Effect.all([accounts.planOf(accountId), repo.countPrompts(accountId)])
              if (count >= plan.maxPrompts) {
                return yield* Effect.fail(planLimit(plan, count, plan.maxPrompts, "monitored prompts"))
              }
              const created = yield* repo.addPrompt(accountId, brand.id, {
                id: crypto.randomUUID(),
                prompt: text,
                topic: input.topic?.trim().slice(0, BRAND_LIMITS.topic) || "general",
                intent: input.intent ?? "informational",
                source: input.source ?? "manual",
                sourceQuery: input.source_query?.trim().slice(0, BRAND_LIMITS.sourceQuery) ?? "",
                createdAt: yield* now
              }).pipe(Effect.catchTag("NameTaken", () => Effect.fail(conflict("prompt already monitored"))))
              return promptView(created)
            })
          )
        }),
      setDrainSecret: (accountId, slug, secret) =>
        Effect.gen(function*() {
          const brand = yield* row(accountId, slug)
          const value = secret === null || secret === undefined || secret.trim() === "" ? null : secret.trim()
          yield* repo.setDrainSecret(accountId, brand.id, value)
          yield* brandsChanged(accountId)
        }),
      findSite: (siteId) => (isSiteId(siteId) ? repo.findBySiteId(siteId.toLowerCase()) : Effect.succeed(Option.none())),
      bySiteId: (accountId, siteId) =>
        isSiteId(siteId)
          ? Effect.flatMap(brandsOf(accountId), ({ sites }): Effect.Effect<SiteBrand, NotFound | Forbidden> => {
            const own = sites.get(siteId.toLowerCase())
            if (own !== undefined) return Effect.succeed(own)
            // Not among the account's cached brands: read it (unknown, another account's, or created a moment ago).
            return Effect.flatMap(repo.findBySiteId(siteId.toLowerCase()), (found): Effect.Effect<SiteBrand, NotFound | Forbidden> =>
              Option.isNone(found)
                ? Effect.fail(SITE_NOT_FOUND)
                : found.value.accountId === accountId
                ? Effect.succeed(found.value)
                : Effect.fail(SITE_FOREIGN))
          })
          : Effect.fail(SITE_NOT_FOUND),
      slugs: (brands) => Effect.map(repo.slugs(brands), (found) => new Map(found.map((b) => [b.brandId, b.slug])))
    }
  })
).pipe(Layer.provide([AccountsLive, InvalidationsLive]))
