import { type CatalogAgent, loadCatalog } from "../catalog/Classifier.js"
import { bundledSnapshot, indexSnapshot } from "./Snapshot.js"
import { defaultDirectories, type KeyDirectory, type Method } from "./Verification.js"

/**
 * The verification methods each catalog agent's operator publishes, from the bundled snapshot
 * (docs/verification.md): ip_ranges (a range file names the agent), reverse_dns (the catalog's
 * host suffixes), web_bot_auth (a key directory of its vendor with keys). `cli classify` prints them.
 */
export const methodsTable = (
  agents: ReadonlyArray<CatalogAgent>,
  rangeBots: ReadonlySet<string>,
  directories: ReadonlyArray<KeyDirectory>
): ReadonlyMap<string, ReadonlyArray<Method>> => {
  const signing = new Set(directories.filter((d) => d.keys.length > 0).map((d) => d.operator))
  return new Map(agents.map((a) => {
    const methods: Array<Method> = []
    if (rangeBots.has(a.bot)) methods.push("ip_ranges")
    if ((a.verification?.reverse_dns ?? []).length > 0) methods.push("reverse_dns")
    if (signing.has(a.vendor)) methods.push("web_bot_auth")
    return [a.bot, methods]
  }))
}

let bundled: ReadonlyMap<string, ReadonlyArray<Method>> | undefined
/** The table of the bundled catalog and snapshot (read once). */
export const bundledMethods = (): ReadonlyMap<string, ReadonlyArray<Method>> =>
  (bundled ??= methodsTable(loadCatalog().agents, new Set(indexSnapshot(bundledSnapshot()).byBot.keys()), defaultDirectories()))
