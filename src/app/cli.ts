import { Args, CliConfig, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { BunContext, BunRuntime } from "@effect/platform-bun"
import { Cause, Console, Effect, Layer, Option, Schema } from "effect"
import { type PlanId, PLAN_IDS } from "../accounts/Plans.js"
import { AccountsRepo, AccountsRepoLive } from "../accounts/Repo.js"
import { runClassify } from "../verification/classifyCli.js"
import { LOG_FORMATS } from "../ingestion/formats/common.js"
import { shipCommand } from "../ingestion/shipCli.js"
import { AppConfigLive } from "../platform/Config.js"
import { MigratedSqlLive } from "../platform/Migrations.js"
import { rangesUpdate, verifyCommand } from "../verification/cli.js"
import { demoCommand } from "./Demo.js"
import { importCommand, scanCommand, scanEnvironmentLive } from "../observations/cli.js"
import { cliServicesLive } from "./Layers.js"

/**
 * The operator command line (docs/decisions.md), on @effect/cli: subcommands with typed options and
 * generated help (`bun run cli --help`, `bun run cli <command> --help`). The same Layers and database
 * as the server; on the embedded database held by a running server, through that server's channel
 * (src/platform/EmbeddedChannel.ts).
 *
 * Exit codes: 0 done; 1 a well-formed command that could not be carried out, or that met errors
 * (an import with bad lines, a ship with failed batches); 2 a mistyped command, or none.
 *
 * The domains' commands keep their own checks of what the options mean (an unknown brand, a
 * samples count out of range) and their outputs; this file declares the options and runs them.
 */

/** A well-formed command that could not be carried out: exit code 1. */
class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", { message: Schema.String }) {}

/** A mistyped command: exit code 2. */
class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { message: Schema.String }) {}

/** Alone, a command that only groups others prints its help and exits 2 (nothing was done). */
const helpOf = <Name extends string, R, E, A>(command: Command.Command<Name, R, E, A>) =>
  Effect.suspend(() => Effect.fail(new UsageError({ message: HelpDoc.toAnsiText(Command.getHelp(command, CliConfig.defaultConfig)) })))

const DatabaseLive = MigratedSqlLive.pipe(Layer.provide(AppConfigLive))

/**
 * A lone "-" (standard input for ship, no IP for verify) reads to @effect/cli as the start of an
 * option, and the options after it go unseen; it passes as a token no file name can be (a NUL) and
 * is turned back into "-" for the command.
 */
const DASH = "\u0000-"
const undash = (arg: string) => (arg === DASH ? "-" : arg)

/** The flags of a domain command that reads its own arguments: `--name value` for each value present. */
const flags = (entries: ReadonlyArray<readonly [string, Option.Option<string | number>]>): Array<string> =>
  entries.flatMap(([name, value]) => (Option.isSome(value) ? [`--${name}`, String(value.value)] : []))

const migrate = Command.make("migrate", {}, () => Console.log("migrations are up to date").pipe(Effect.provide(DatabaseLive)))
  .pipe(Command.withDescription("apply pending migrations and exit"))

const planSet = Command.make(
  "set",
  { email: Args.text({ name: "email" }), plan: Args.choice(PLAN_IDS.map((id): [string, PlanId] => [id, id]), { name: "plan" }) },
  ({ email, plan }) =>
    Effect.gen(function*() {
      const repo = yield* AccountsRepo
      const account = yield* repo.setPlanByEmail(email, plan)
      if (Option.isNone(account)) return yield* Effect.fail(new CommandFailed({ message: `no user with email ${email}` }))
      yield* Console.log(`account ${account.value.id} (${account.value.name}) of ${email} is now on the ${plan} plan`)
    }).pipe(Effect.provide(AccountsRepoLive.pipe(Layer.provide(DatabaseLive))))
).pipe(Command.withDescription(`move that user's account to a plan (${PLAN_IDS.join(", ")})`))

const plan = Command.make("plan", {}, (): Effect.Effect<never, UsageError> => helpOf(plan))
  .pipe(Command.withDescription("account plans"), Command.withSubcommands([planSet]))

/** Waits for stdout to drain when it asks to, so millions of lines stream in bounded memory. */
const writeStdout = (chunk: string): undefined | Promise<void> =>
  process.stdout.write(chunk) ? undefined : new Promise((resolve) => process.stdout.once("drain", () => resolve()))

const classify = Command.make("classify", {}, () => Effect.promise(() => runClassify(Bun.stdin.stream(), writeStdout)))
  .pipe(Command.withDescription("User-Agent strings on stdin, one JSON line each on stdout"))

const importObservations = Command.make(
  "import",
  {
    slug: Args.text({ name: "brand-slug" }),
    file: Args.text({ name: "file" }),
    email: Options.text("email").pipe(Options.optional, Options.withDescription("the user whose brand it is, when the slug is in several accounts"))
  },
  ({ email, file, slug }) => importCommand([slug, file, ...flags([["email", email]])]).pipe(Effect.provide(cliServicesLive()))
).pipe(Command.withDescription("import answer observations (JSON array or NDJSON, gzip allowed), as the dashboard endpoint"))

const demo = Command.make(
  "demo",
  { days: Options.integer("days").pipe(Options.withDefault(90), Options.withDescription("days of history, 1..400")) },
  ({ days }) => demoCommand(["--days", String(days)]).pipe(Effect.provide(cliServicesLive()))
).pipe(Command.withDescription("create or refresh the demo workspace; prints the login and a fresh API key"))

const optionalText = (name: string, description: string) =>
  Options.text(name).pipe(Options.optional, Options.withDescription(description))
const optionalInteger = (name: string, description: string) =>
  Options.integer(name).pipe(Options.optional, Options.withDescription(description))

const ship = Command.make(
  "ship",
  {
    files: Args.text({ name: "file" }).pipe(Args.atLeast(1), Args.withDescription("a log file, gzip or not; - reads standard input")),
    site: Options.text("site").pipe(Options.withDescription("the brand's site_id")),
    key: optionalText("key", "an API key of the account; discouraged: bun echoes it (export AIV_API_KEY instead, the default)"),
    url: optionalText("url", "the server's base URL (default AIV_URL, else http://localhost:8080)"),
    format: Options.choice("format", LOG_FORMATS).pipe(Options.optional, Options.withDescription("the log format (default auto: detected line by line)")),
    channel: optionalText("channel", "the batch channel (default csv_upload)"),
    batch: optionalInteger("batch", "records per request, at most 2000 (default 2000)"),
    concurrency: optionalInteger("concurrency", "requests in flight (default 4)"),
    all: Options.boolean("all").pipe(Options.withDescription("send every request, not only those the local crawler catalog recognises")),
    quiet: Options.boolean("quiet").pipe(Options.withDescription("no progress output"))
  },
  (o) =>
    // A client of a server (docs/ingestion.md): no database, no Layers.
    (Option.isSome(o.key)
      ? Console.error("note: --key shows the API key in bun's echo of the command, the process list and the shell's history; export AIV_API_KEY instead")
      : Effect.void).pipe(Effect.zipRight(shipCommand([
      ...o.files.map(undash),
      ...flags([["site", Option.some(o.site)], ["key", o.key], ["url", o.url], ["format", o.format], ["channel", o.channel], [
        "batch",
        o.batch
      ], ["concurrency", o.concurrency]]),
      ...(o.all ? ["--all"] : []),
      ...(o.quiet ? ["--quiet"] : [])
    ]))).pipe(Effect.mapError((e) => (e._tag === "ShipUsageError" ? new UsageError({ message: e.message }) : new CommandFailed({ message: e.message }))))
).pipe(Command.withDescription("send log files to a server's batch endpoint"))

const rangesUpdateCommand = Command.make(
  "update",
  { from: Options.directory("from").pipe(Options.optional, Options.withDescription("read the files from this directory, not their URLs")) },
  ({ from }) => rangesUpdate(flags([["from", from]])).pipe(Effect.provide(cliServicesLive()))
).pipe(Command.withDescription("refresh the operators' IP range files (from their URLs, or DIR); servers reload them"))

const ranges = Command.make("ranges", {}, (): Effect.Effect<never, UsageError> => helpOf(ranges))
  .pipe(Command.withDescription("the verified agents' IP ranges"), Command.withSubcommands([rangesUpdateCommand]))

const verify = Command.make(
  "verify",
  {
    ip: Args.text({ name: "ip" }).pipe(Args.withDescription("the client IP, or - for none")),
    userAgent: Args.text({ name: "user agent" }).pipe(Args.atLeast(1)),
    host: optionalText("host", "the request's Host"),
    path: optionalText("path", "the request's path (default /)"),
    method: optionalText("method", "the request's method (default GET)"),
    signature: optionalText("signature", "the Signature header (Web Bot Auth)"),
    signatureInput: optionalText("signature-input", "the Signature-Input header"),
    signatureAgent: optionalText("signature-agent", "the Signature-Agent header")
  },
  (o) =>
    verifyCommand([
      ...flags([["host", o.host], ["path", o.path], ["method", o.method], ["signature", o.signature], ["signature-input", o.signatureInput], [
        "signature-agent",
        o.signatureAgent
      ]]),
      undash(o.ip),
      ...o.userAgent
    ]).pipe(Effect.provide(cliServicesLive()))
).pipe(Command.withDescription("the verdict of one request (verified, spoofed, unverified) and why"))

const scan = Command.make(
  "scan",
  {
    brand: optionalText("brand", "only the brands with this slug"),
    engine: optionalText("engine", "only this configured engine"),
    samples: optionalInteger("samples", "samples per prompt and engine, 1..20")
  },
  ({ brand, engine, samples }) =>
    scanCommand(flags([["brand", brand], ["engine", engine], ["samples", samples]])).pipe(
      Effect.asVoid,
      Effect.provide(Layer.merge(cliServicesLive(), scanEnvironmentLive))
    )
).pipe(Command.withDescription("scan now with the configured answer engines; prints what was stored and why calls failed"))

const commands = [migrate, plan, classify, importObservations, demo, ship, ranges, verify, scan] as const

/** `bun run cli` alone: the help, and a non-zero exit (nothing was done). */
const root = Command.make("cli", {}, (): Effect.Effect<never, UsageError> => helpOf(cli))
  .pipe(Command.withDescription("the operator command line of the Brand AI-Visibility service"))
const cli = root.pipe(Command.withSubcommands(commands))

export const runCli = Command.run(cli, { name: "bun run cli", version: "0.1.0" })

/**
 * What the CLI writes, as a terminal or a pipe wants it: @effect/cli's help comes in ANSI colours and
 * pads its command table to the longest usage line (some 220 columns: `ship`'s and `verify`'s
 * options). Colour codes are dropped unless the stream is a terminal (and NO_COLOR is unset), and in
 * the command table a description goes on the line after a usage longer than USAGE_COLUMN (or when
 * the row would pass 100 columns), a long usage wrapped at 76.
 */
const ANSI = /\x1b\[[0-9;]*m/g
const USAGE_COLUMN = 36
const TABLE_ROW = /^(\s*)- (.*?\S)( {2,})(\S.*)$/

/** @effect/cli's help (its headings say so): the command table reflowed, every line within 100 columns. */
const layoutHelp = (text: string): string => {
  if (!text.includes("DESCRIPTION") && !text.includes("COMMANDS")) return text
  return reflowCommands(text).split("\n").map((line) => {
    if (line.replace(ANSI, "").length <= 100) return line
    const indent = /^\s*/.exec(line)![0]
    return indent + wrap(line.slice(indent.length), 96 - indent.length, indent)
  }).join("\n")
}

const reflowCommands = (text: string): string => {
  if (!text.includes("COMMANDS")) return text
  const lines = text.split("\n")
  const rows = lines.map((line) => TABLE_ROW.exec(line.replace(ANSI, "")))
  const width = Math.max(0, ...rows.flatMap((row) => (row !== null && row[2]!.length <= USAGE_COLUMN ? [row[2]!.length] : [])))
  return lines.map((line, i) => {
    const row = rows[i]
    if (row === null || row === undefined) return line
    const [, indent, usage, , description] = row
    return usage!.length <= USAGE_COLUMN && indent!.length + width + 4 + description!.length <= 100
      ? `${indent}- ${usage!.padEnd(width)}  ${description}`
      : `${indent}- ${wrap(usage!, 76, `${indent}    `)}\n${indent}    ${description}`
  }).join("\n")
}

/** Words to lines of at most `width` characters, the lines after the first indented. */
const wrap = (text: string, width: number, indent: string): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.join(`\n${indent}  `)
}

const forStream = (stream: NodeJS.WriteStream) => (arg: unknown): unknown => {
  if (typeof arg !== "string") return arg
  const colours = stream.isTTY === true && process.env["NO_COLOR"] === undefined
  return layoutHelp(colours ? arg : arg.replace(ANSI, ""))
}

const terminalAware = (base: Console.Console): Console.Console => ({
  ...base,
  log: (...args) => base.log(...args.map(forStream(process.stdout))),
  error: (...args) => base.error(...args.map(forStream(process.stderr)))
})

/** The message of whatever failed; the exit code says its kind. */
const report = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.squash(cause)
  // @effect/cli has printed its own message and the help of the command.
  if (ValidationError.isValidationError(failure)) return Effect.sync(() => void (process.exitCode = 2))
  const message = failure instanceof UsageError || failure instanceof CommandFailed
    ? failure.message
    : failure instanceof Error
    ? failure.message
    : typeof failure === "object" && failure !== null && "message" in failure
    ? String(failure.message)
    : Cause.pretty(cause)
  return Console.error(message).pipe(Effect.zipRight(Effect.sync(() => void (process.exitCode = failure instanceof UsageError ? 2 : 1))))
}

if (import.meta.main) {
  BunRuntime.runMain(
    Console.consoleWith((base) =>
      runCli(process.argv.map((arg) => (arg === "-" ? DASH : arg))).pipe(
        Effect.catchAllCause(report),
        Console.withConsole(terminalAware(base))
      )
    ).pipe(Effect.provide(BunContext.layer)),
    { disableErrorReporting: true }
  )
}
