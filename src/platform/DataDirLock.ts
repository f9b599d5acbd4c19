import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { errorCode } from "./Guards.js"

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return errorCode(error) === "EPERM"
  }
}

/** The live process other than this one that holds the data directory, if any. */
export const dataDirHolder = (dataDir: string): number | undefined => {
  let holder: number
  try {
    holder = Number.parseInt(readFileSync(join(dataDir, "aiv.lock"), "utf8").trim(), 10)
  } catch {
    return undefined
  }
  return Number.isFinite(holder) && holder !== process.pid && isAlive(holder) ? holder : undefined
}

/**
 * PGlite has one session and no file locking of its own: two processes on one data
 * directory would corrupt it. A pid file taken for the life of the scope says so clearly.
 */
export const acquireDataDirLock = (dataDir: string) => {
  const path = join(dataDir, "aiv.lock")
  return Effect.acquireRelease(
    Effect.suspend(() => {
      let holder: number | undefined
      try {
        holder = Number.parseInt(readFileSync(path, "utf8").trim(), 10)
      } catch {
        holder = undefined
      }
      if (holder !== undefined && Number.isFinite(holder) && holder !== process.pid && isAlive(holder)) {
        return Effect.fail(
          new SqlError({
            message:
              `The embedded database in ${dataDir} is locked by process ${holder} (a running server?). ` +
              `Stop that process, or set DATABASE_URL to use a PostgreSQL server shared by both.`
          })
        )
      }
      writeFileSync(path, String(process.pid))
      return Effect.void
    }),
    () => Effect.sync(() => rmSync(path, { force: true }))
  )
}
