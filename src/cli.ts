import { BunRuntime } from "@effect/platform-bun"
import { Cause, Console, Effect, Layer, Option } from "effect"
import { isPlanId, PLAN_IDS } from "./accounts/Plans.js"
import { AccountsRepo, AccountsRepoLive } from "./accounts/Repo.js"
import { runClassify } from "./catalog/classifyCli.js"
import { shipCommand } from "./ingestion/shipCli.js"
import { AppConfigLive } from "./platform/Config.js"
import { MigratedSqlLive } from "./platform/Database.js"
import { rangesUpdate, verifyCommand } from "./verification/cli.js"
import { cliServicesLive, demoCommand, importCommand, scanCommand, scanEnvironmentLive } from "./visibility/cli.js"

/**
 * The operator command line (decisions.md): the same Layers and database as the server.
 * On the embedded database a running server holds the data directory; the lock says so.
 */

const USAGE = `usage: bun run cli <command>

commands:
  migrate                      apply pending migrations and exit
  plan set <email> <plan>      move that user's account to a plan (${PLAN_IDS.join(", ")})
  classify                     User-Agent strings on stdin, one JSON line each on stdout
  import <brand-slug> <file> [--email <user email>]
                               import answer observations (JSON array or NDJSON), as the dashboard endpoint
  demo [--days N]              create or refresh the demo workspace; prints the login and a fresh API key
  ship <file>... --site <site_id> --key <API key> [--url <base URL>] [--format <format>]
                               send log files (gzip or not, - for stdin) to a server's batch endpoint
  ranges update [--from DIR]   refresh the operators' IP range files (from their URLs, or DIR); servers reload them
  verify <ip> <user agent>     the verdict of one request (verified, spoofed, unverified) and why
  scan [--brand <slug>] [--engine <slug>] [--samples N]
                               scan now with the configured answer engines; prints what was stored and why calls failed
`

/** A mistyped command: exit code 2. */
class UsageError {
  readonly _tag = "UsageError"
  constructor(readonly message: string) {}
}

/** A well-formed command that could not be carried out: exit code 1. */
class CommandFailed {
  readonly _tag = "CommandFailed"
  constructor(readonly message: string) {}
}

const DatabaseLive = MigratedSqlLive.pipe(Layer.provide(AppConfigLive))

const migrate = Effect.gen(function*() {
  yield* Console.log("migrations are up to date")
}).pipe(Effect.provide(DatabaseLive))

const planSet = (email: string, plan: string) =>
  Effect.gen(function*() {
    if (!isPlanId(plan)) return yield* Effect.fail(new UsageError(`unknown plan "${plan}": one of ${PLAN_IDS.join(", ")}`))
    const repo = yield* AccountsRepo
    const account = yield* repo.setPlanByEmail(email, plan)
    if (Option.isNone(account)) return yield* Effect.fail(new CommandFailed(`no user with email ${email}`))
    yield* Console.log(`account ${account.value.id} (${account.value.name}) of ${email} is now on the ${plan} plan`)
  }).pipe(Effect.provide(AccountsRepoLive.pipe(Layer.provide(DatabaseLive))))

/** Waits for stdout to drain when it asks to, so millions of lines stream in bounded memory. */
const writeStdout = (chunk: string): undefined | Promise<void> =>
  process.stdout.write(chunk) ? undefined : new Promise((resolve) => process.stdout.once("drain", () => resolve()))

const classify = Effect.promise(() => runClassify(Bun.stdin.stream(), writeStdout))

const command = (args: ReadonlyArray<string>): Effect.Effect<void, unknown> => {
  const [name, ...rest] = args
  switch (name) {
    case "migrate":
      return migrate
    case "plan":
      return rest[0] === "set" && rest.length === 3
        ? planSet(rest[1]!, rest[2]!)
        : Effect.fail(new UsageError("usage: bun run cli plan set <email> <plan>"))
    case "classify":
      return classify
    case "import":
      return importCommand(rest).pipe(Effect.provide(cliServicesLive()))
    case "demo":
      return demoCommand(rest).pipe(Effect.provide(cliServicesLive()))
    case "ship":
      // A client of a server (docs/ingestion.md): no database, no Layers.
      return shipCommand(rest).pipe(
        Effect.mapError((e) => (e._tag === "ShipUsageError" ? new UsageError(e.message) : new CommandFailed(e.message)))
      )
    case "ranges":
      return rest[0] === "update"
        ? rangesUpdate(rest.slice(1)).pipe(Effect.provide(cliServicesLive()))
        : Effect.fail(new UsageError("usage: bun run cli ranges update [--from DIR]"))
    case "verify":
      return verifyCommand(rest).pipe(Effect.provide(cliServicesLive()))
    case "scan":
      return scanCommand(rest).pipe(Effect.asVoid, Effect.provide(Layer.merge(cliServicesLive(), scanEnvironmentLive)))
    case undefined:
    case "help":
    case "--help":
      return Console.log(USAGE)
    default:
      return Effect.fail(new UsageError(`unknown command "${name}"\n\n${USAGE}`))
  }
}

if (import.meta.main) {
  const program = command(process.argv.slice(2)).pipe(
    Effect.catchAllCause((cause) => {
      const failure = Cause.squash(cause)
      const message = failure instanceof UsageError || failure instanceof CommandFailed
        ? failure.message
        : failure instanceof Error || (typeof failure === "object" && failure !== null && "message" in failure)
        ? String((failure as { message: unknown }).message)
        : Cause.pretty(cause)
      return Console.error(message).pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = failure instanceof UsageError ? 2 : 1))))
    })
  )
  BunRuntime.runMain(program, { disableErrorReporting: true })
}
