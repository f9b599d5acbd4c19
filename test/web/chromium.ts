import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { freePort } from "../hardening/server.js"

/**
 * A real server (`bun run start` on a free port, fresh embedded database) and headless Chromium
 * (Debian's /usr/bin/chromium driven by playwright-core), with the flags of the browser tests.
 * In CI (CI=true) a missing Chromium fails the test instead of skipping it.
 */

export const CHROMIUM = "/usr/bin/chromium"
export const ROOT = join(import.meta.dir, "..", "..")
export const haveChromium = existsSync(CHROMIUM)
if (!haveChromium && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs chromium`)

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

export interface Served {
  readonly base: string
  readonly stop: () => Promise<void>
}

/** Starts the service and waits for /healthz; the demo workspace (when DEMO=1) exists before it listens. */
export const startServer = async (env: Record<string, string>): Promise<Served> => {
  const dataDir = mkdtempSync(join(tmpdir(), "aiv-browser-"))
  const port = freePort()
  const base = `http://127.0.0.1:${port}`
  const server = Bun.spawn(["bun", "run", "start"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, DATABASE_URL: "", ...env },
    stdout: "ignore",
    stderr: "ignore"
  })
  const stop = async () => {
    server.kill("SIGTERM")
    await server.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
  for (let i = 0; i < 2400; i++) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) return { base, stop }
    if (server.exitCode !== null) break
    await Bun.sleep(100)
  }
  await stop()
  throw new Error("server did not come up")
}

/** A fresh Chromium profile and its first page; errors thrown by the page are collected. */
export const openBrowser = async (width = 1280, height = 900) => {
  const profileDir = mkdtempSync(join(tmpdir(), "aiv-chromium-"))
  const context: BrowserContext = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width, height }
  })
  const page: Page = context.pages()[0] ?? await context.newPage()
  const pageErrors: Array<string> = []
  page.on("pageerror", (error) => pageErrors.push(error.message))
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) pageErrors.push(message.text())
  })
  const close = async () => {
    await context.close()
    rmSync(profileDir, { recursive: true, force: true })
  }
  return { context, page, pageErrors, close }
}
