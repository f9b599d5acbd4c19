import { Effect, Layer, Option, PubSub, Stream } from "effect"
import { ApiKeysRepo, type ApiKeyRow } from "../../src/accounts/KeysRepo.js"
import { isPlanId, type Plan, type PlanId } from "../../src/accounts/Plans.js"
import { AccountsRepo, EmailTaken } from "../../src/accounts/Repo.js"
import { BrandsRepo, type BrandRow, type CompetitorRow, NameTaken, type PromptRow, SlugTaken } from "../../src/brands/Repo.js"
import { canonicalEmail } from "../../src/platform/Email.js"
import { INVALIDATION_CHANNEL } from "../../src/platform/Invalidations.js"
import { Database, Listening } from "../../src/platform/Sql.js"
import { makeFakeAgentsRepo } from "./agents.js"
import { makeFakeIngestionRepos } from "./ingestion.js"
import { makeFakeVerificationRepo } from "./verification.js"
import { makeFakeObservationsRepo } from "./observations.js"
import { makeFakeVisibilityRepo } from "./visibility.js"
import { makeFakeWebhooksRepo } from "./webhooks.js"

/**
 * In-memory repositories with the same contracts as the SQL ones, for fast tests of
 * services and handlers. One shared store so that joins (a brand's plan) stay honest.
 */
interface Store {
  accounts: Array<{ id: number; name: string; planId: string }>
  users: Array<{ id: number; accountId: number; email: string; passwordHash: string }>
  sessions: Map<string, { accountId: number; userId: number; expiresAt: Date }>
  keys: Array<ApiKeyRow>
  brands: Array<Omit<BrandRow, "scanHours"> & { drainSecret: string | null }>
  competitors: Array<CompetitorRow & { accountId: number; brandId: number }>
  prompts: Array<PromptRow & { accountId: number; brandId: number }>
  monthly: Map<string, number>
}

/** The same figures as the seed of migrations/0001_init.sql, for the in-memory accounts repository. */
const SEEDED_PLANS: Readonly<Record<PlanId, Plan>> = {
  free: { id: "free", paid: false, maxKeys: 1, maxBrands: 1, maxPrompts: 10, batchIngest: false, drainIngest: false, monthlyEvents: 0, scanHours: 168 },
  starter: { id: "starter", paid: true, maxKeys: 3, maxBrands: 3, maxPrompts: 50, batchIngest: true, drainIngest: false, monthlyEvents: 100_000, scanHours: 72 },
  growth: { id: "growth", paid: true, maxKeys: 10, maxBrands: 10, maxPrompts: 250, batchIngest: true, drainIngest: true, monthlyEvents: 1_000_000, scanHours: 24 },
  enterprise: { id: "enterprise", paid: true, maxKeys: 50, maxBrands: 100, maxPrompts: 2500, batchIngest: true, drainIngest: true, monthlyEvents: 50_000_000, scanHours: 6 }
}

const planOf = (store: Store, accountId: number): Plan => {
  const account = store.accounts.find((a) => a.id === accountId)
  const id = account?.planId ?? "free"
  return isPlanId(id) ? SEEDED_PLANS[id] : SEEDED_PLANS.free
}

export const makeFakeRepositories = () => {
  const store: Store = {
    accounts: [],
    users: [],
    sessions: new Map(),
    keys: [],
    brands: [],
    competitors: [],
    prompts: [],
    monthly: new Map()
  }
  let nextId = 1
  const id = () => nextId++
  /** This store's LISTEN/NOTIFY (fakeDatabase): its changes notify as the database's triggers do. */
  const hub = Effect.runSync(PubSub.unbounded<Notification>())

  const accounts = Layer.succeed(AccountsRepo, {
    createAccountWithUser: (input) =>
      Effect.suspend(() => {
        if (store.users.some((u) => canonicalEmail(u.email) === canonicalEmail(input.email))) {
          return Effect.fail(new EmailTaken())
        }
        const account = { id: id(), name: input.accountName, planId: "free" }
        store.accounts.push(account)
        const userId = id()
        store.users.push({ id: userId, accountId: account.id, email: input.email, passwordHash: input.passwordHash })
        return Effect.succeed({ account: { id: account.id, name: account.name, plan: account.planId }, userId })
      }),
    findUserByEmail: (email) =>
      Effect.sync(() =>
        Option.map(
          Option.fromNullable(store.users.find((u) => canonicalEmail(u.email) === canonicalEmail(email))),
          (u) => ({ userId: u.id, accountId: u.accountId, email: u.email, passwordHash: u.passwordHash })
        )
      ),
    findUser: (userId) =>
      Effect.sync(() =>
        Option.map(
          Option.fromNullable(store.users.find((u) => u.id === userId)),
          (u) => ({ userId: u.id, accountId: u.accountId, email: u.email, passwordHash: u.passwordHash })
        )
      ),
    changePassword: (input) =>
      Effect.sync(() => {
        const user = store.users.find((u) => u.id === input.userId)
        if (user) user.passwordHash = input.passwordHash
        for (const [hash, session] of store.sessions) if (session.userId === input.userId) store.sessions.delete(hash)
        store.sessions.set(input.session.tokenHash, {
          accountId: input.session.accountId,
          userId: input.userId,
          expiresAt: input.session.expiresAt
        })
      }),
    deleteSessionsOfUser: (userId) =>
      Effect.sync(() => {
        let ended = 0
        for (const [hash, session] of store.sessions) {
          if (session.userId === userId) {
            store.sessions.delete(hash)
            ended++
          }
        }
        return ended
      }),
    fillEmailKeys: Effect.succeed(0),
    createSession: (input) =>
      Effect.sync(() => {
        store.sessions.set(input.tokenHash, { accountId: input.accountId, userId: input.userId, expiresAt: input.expiresAt })
      }),
    findSession: (tokenHash, now) =>
      Effect.sync(() => {
        const session = store.sessions.get(tokenHash)
        if (!session || session.expiresAt <= now) return Option.none()
        const user = store.users.find((u) => u.id === session.userId)
        return user ? Option.some({ userId: user.id, accountId: session.accountId, email: user.email }) : Option.none()
      }),
    deleteSession: (tokenHash) => Effect.sync(() => void store.sessions.delete(tokenHash)),
    account: (accountId) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(store.accounts.find((a) => a.id === accountId)), (a) => ({
          id: a.id,
          name: a.name,
          plan: a.planId
        }))
      ),
    planOf: (accountId) => Effect.sync(() => planOf(store, accountId)),
    usage: (accountId, month) =>
      Effect.sync(() => ({
        brands: store.brands.filter((b) => b.accountId === accountId).length,
        prompts: store.prompts.filter((p) => p.accountId === accountId).length,
        activeKeys: store.keys.filter((k) => k.accountId === accountId && k.revokedAt === null).length,
        monthlyEvents: store.monthly.get(`${accountId}:${month}`) ?? 0
      })),
    setPlanByEmail: (email, planId) =>
      Effect.suspend(() => {
        const user = store.users.find((u) => canonicalEmail(u.email) === canonicalEmail(email))
        const account = user && store.accounts.find((a) => a.id === user.accountId)
        if (!account) return Effect.succeed(Option.none())
        account.planId = planId
        // What the database's trigger on accounts.plan_id sends at the commit (migration 0016).
        return Effect.as(
          PubSub.publish(hub, { channel: INVALIDATION_CHANNEL, payload: `account:${account.id}` }),
          Option.some({ id: account.id, name: account.name, plan: planId })
        )
      }),
    // One JS thread: nothing interleaves inside a synchronous fake, so the lock is the identity.
    withAccountLock: (_accountId, effect) => effect
  })

  const keys = Layer.succeed(ApiKeysRepo, {
    list: (accountId) => Effect.sync(() => store.keys.filter((k) => k.accountId === accountId)),
    countActive: (accountId) =>
      Effect.sync(() => store.keys.filter((k) => k.accountId === accountId && k.revokedAt === null).length),
    insert: (row) => Effect.sync(() => void store.keys.push(row)),
    revoke: (accountId, keyId, now) =>
      Effect.sync(() => {
        const index = store.keys.findIndex((k) => k.id === keyId && k.accountId === accountId)
        if (index === -1) return Option.none()
        const row = store.keys[index]!
        const updated = { ...row, revokedAt: row.revokedAt ?? now }
        store.keys[index] = updated
        return Option.some(updated)
      }),
    findByHash: (keyHash) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(store.keys.find((k) => k.keyHash === keyHash)), (k) => ({
          id: k.id,
          accountId: k.accountId,
          revoked: k.revokedAt !== null,
          used: k.lastUsedAt !== null
        }))
      ),
    overCap: (accountId) =>
      Effect.sync(() => {
        if (!store.accounts.some((a) => a.id === accountId)) return Option.none()
        const plan = planOf(store, accountId)
        const active = store.keys
          .filter((k) => k.accountId === accountId && k.revokedAt === null)
          .sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
        return Option.some({ plan: plan.id, maxKeys: plan.maxKeys, ids: active.slice(plan.maxKeys).map((k) => k.id) })
      }),
    touch: (entries) =>
      Effect.sync(() => {
        for (const entry of entries) {
          const index = store.keys.findIndex((k) => k.id === entry.id)
          const row = store.keys[index]
          if (row && (!row.lastUsedAt || row.lastUsedAt < entry.at)) store.keys[index] = { ...row, lastUsedAt: entry.at }
        }
      })
  })

  const withPlan = (brand: Store["brands"][number]): BrandRow => ({ ...brand, scanHours: planOf(store, brand.accountId).scanHours })
  const byAdded = (a: { addedAt: Date; id: number }, b: { addedAt: Date; id: number }) =>
    a.addedAt.getTime() - b.addedAt.getTime() || a.id - b.id

  const brands = Layer.succeed(BrandsRepo, {
    list: (accountId) =>
      Effect.sync(() => ({
        brands: store.brands.filter((b) => b.accountId === accountId).sort(byAdded).map(withPlan),
        limit: planOf(store, accountId).maxBrands
      })),
    get: (accountId, slug) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(store.brands.find((b) => b.accountId === accountId && b.slug === slug)), withPlan)
      ),
    count: (accountId) => Effect.sync(() => store.brands.filter((b) => b.accountId === accountId).length),
    insert: (brand) =>
      Effect.suspend(() => {
        if (store.brands.some((b) => b.accountId === brand.accountId && b.slug === brand.slug)) {
          return Effect.fail(new SlugTaken())
        }
        const { now, ...fields } = brand
        const row = { ...fields, id: id(), nextScanAt: now, addedAt: now, drainSecret: null }
        store.brands.push(row)
        return Effect.succeed(withPlan(row))
      }),
    addCompetitor: (accountId, brandId, input) =>
      Effect.suspend(() => {
        if (store.competitors.some((c) => c.brandId === brandId && c.name.toLowerCase() === input.name.toLowerCase())) {
          return Effect.fail(new NameTaken())
        }
        const row = {
          id: id(),
          accountId,
          brandId,
          name: input.name,
          domain: input.domain,
          aliases: input.aliases,
          pinned: input.pinned,
          createdAt: input.now
        }
        store.competitors.push(row)
        return Effect.succeed(row)
      }),
    competitors: (accountId, brandId) =>
      Effect.sync(() =>
        store.competitors
          .filter((c) => c.accountId === accountId && c.brandId === brandId)
          .map(({ id, name, domain, aliases, pinned, createdAt }) => ({ id, name, domain, aliases, pinned, createdAt }))
      ),
    countPrompts: (accountId) => Effect.sync(() => store.prompts.filter((p) => p.accountId === accountId).length),
    addPrompt: (accountId, brandId, input) =>
      Effect.suspend(() => {
        if (store.prompts.some((p) => p.brandId === brandId && p.prompt === input.prompt)) return Effect.fail(new NameTaken())
        const row = { ...input, num: id(), accountId, brandId }
        store.prompts.push(row)
        return Effect.succeed(row)
      }),
    setDrainSecret: (accountId, brandId, secret) =>
      Effect.sync(() => {
        const brand = store.brands.find((b) => b.id === brandId && b.accountId === accountId)
        if (brand) brand.drainSecret = secret
      }),
    findBySiteId: (siteId) =>
      Effect.sync(() =>
        Option.map(
          Option.fromNullable(store.brands.find((b) => b.siteId.toLowerCase() === siteId.toLowerCase())),
          (b) => ({ id: b.id, accountId: b.accountId, drainSecret: b.drainSecret })
        )
      ),
    slugs: (keys) =>
      Effect.sync(() =>
        store.brands.filter((b) => keys.some((k) => k.accountId === b.accountId && k.brandId === b.id)).map((b) => ({ brandId: b.id, slug: b.slug }))
      )
  })

  const observations = makeFakeObservationsRepo({
    brands: store.brands,
    competitors: store.competitors,
    prompts: store.prompts,
    scanHours: (accountId) => planOf(store, accountId).scanHours,
    maxBrands: (accountId) => planOf(store, accountId).maxBrands,
    emailOf: (accountId) => store.users.find((u) => u.accountId === accountId)?.email ?? ""
  })

  const ingestion = makeFakeIngestionRepos(store.monthly)

  const visibility = makeFakeVisibilityRepo({ prompts: store.prompts, maxPrompts: (accountId) => planOf(store, accountId).maxPrompts })
  const agents = makeFakeAgentsRepo(ingestion.store)
  return {
    layer: Layer.mergeAll(accounts, keys, brands, observations.layer, ingestion.layer, visibility, agents,
      makeFakeVerificationRepo(ingestion.store), makeFakeWebhooksRepo()),
    database: fakeDatabase(hub),
    store,
    observations,
    ingestion
  }
}

interface Notification {
  readonly channel: string
  readonly payload: string
}

/** LISTEN/NOTIFY within one process, for tests without a database. */
const fakeDatabase = (hub: PubSub.PubSub<Notification>) =>
  Layer.succeed(Database, {
    kind: "memory" as const,
    // Subscribed before `Listening` is emitted, as a LISTEN is.
    listen: (channel: string) =>
      Stream.unwrapScoped(
        Effect.map(PubSub.subscribe(hub), (subscription) =>
          Stream.concat(
            Stream.succeed<string | Listening>(Listening),
            Stream.fromQueue(subscription).pipe(
              Stream.filter((message) => message.channel === channel),
              Stream.map((message) => message.payload)
            )
          ))
      ),
    relisten: () => {},
    notify: (channel: string, payload: string) => Effect.asVoid(PubSub.publish(hub, { channel, payload })),
    ping: Effect.void,
    instanceId: "memory",
    peers: () => Effect.succeed([])
  })
