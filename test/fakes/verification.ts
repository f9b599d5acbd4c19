import { Effect, Layer } from "effect"
import { VerificationRepo } from "../../src/verification/Repo.js"
import type { FakeHitsStore } from "./ingestion.js"

/**
 * In-memory VerificationRepo over the fake ingestion store: saved snapshots in a list; pending hits
 * are the stored hits awaiting DNS, settled in place (the fake agents repository reads raw hits, so
 * the verdict moves with them).
 */
export const makeFakeVerificationRepo = (store: FakeHitsStore) => {
  const snapshots: Array<string> = []
  return Layer.succeed(VerificationRepo, {
    latestSnapshot: Effect.sync(() => snapshots.length === 0 ? null : { id: snapshots.length, json: snapshots[snapshots.length - 1]! }),
    saveSnapshot: (json) => Effect.sync(() => snapshots.push(json)),
    pending: (limit) =>
      Effect.sync(() =>
        store.hits.filter((h) => h.verifyPending === true && h.clientIp !== null).sort((a, b) => a.ts - b.ts).slice(0, limit)
          .map((h) => ({ accountId: h.accountId, brandId: h.brandId, key: h.key, bot: h.bot, clientIp: h.clientIp!, ts: new Date(h.ts) }))
      ),
    settle: (updates) =>
      Effect.sync(() => {
        let changed = 0
        for (const u of updates) {
          const i = store.hits.findIndex((h) => h.accountId === u.accountId && h.brandId === u.brandId && h.key === u.key && h.verifyPending === true)
          if (i === -1) continue
          if (u.verdict !== "unverified") changed++
          store.hits[i] = { ...store.hits[i]!, verification: u.verdict, verifyPending: false }
        }
        return changed
      })
  })
}
