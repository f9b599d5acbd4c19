import { FASTLY_LOG_FORMAT } from "../../ingestion/formats/fastly.js"
import { copyButton, h } from "./dom.js"
import { PLAN_FOR, planLabel } from "./labels.js"

/**
 * The set-up of each log source (docs/ingestion.md, "Log sources"), with this brand's URL and
 * site_id filled in: what to paste where on each platform, and the `ship` command for log files.
 */
interface Source {
  readonly name: string
  /** The plan entitlement it needs: a drain delivery or a batch (`ship`). */
  readonly needs: "drain" | "batch"
  readonly steps: ReadonlyArray<string>
  /** What to copy: a URL, a format string or a command. */
  readonly paste: (drain: string, siteId: string, origin: string) => string
}

const SOURCES: ReadonlyArray<Source> = [
  {
    name: "Vercel",
    needs: "drain",
    steps: ["Team or Project Settings > Drains > Custom endpoint: paste the URL, JSON or NDJSON, add the header Authorization: Bearer <API key>."],
    paste: (drain) => `${drain}&format=vercel`
  },
  {
    name: "Cloudflare Logpush",
    needs: "drain",
    steps: [
      "Analytics & Logs > Logpush > Create a Logpush job > HTTP destination: paste this endpoint (header_Authorization sets the header; put your key in place of <API key>).",
      "Dataset HTTP requests; fields ClientRequestUserAgent, ClientRequestHost, ClientRequestURI, ClientRequestMethod, ClientRequestReferer, ClientIP, ClientCountry, EdgeResponseStatus, EdgeStartTimestamp, RayID."
    ],
    paste: (drain) => `${drain}&format=cloudflare&header_Authorization=Bearer%20<API key>`
  },
  {
    name: "Fastly",
    needs: "drain",
    steps: [
      "Logging > HTTPS > Create endpoint: URL <drain URL>&format=fastly, custom header Authorization = Bearer <API key>, content type application/json, newline-delimited JSON.",
      "Log format: paste the format string below. Fastly's domain check (/.well-known/fastly/logging/challenge) is answered by this server."
    ],
    paste: () => FASTLY_LOG_FORMAT
  },
  {
    name: "Akamai DataStream 2",
    needs: "drain",
    steps: ["Create stream, log format JSON; destination Custom HTTPS with this endpoint, authentication None, custom header Authorization = Bearer <API key>."],
    paste: (drain) => `${drain}&format=akamai`
  },
  {
    name: "Netlify",
    needs: "drain",
    steps: ["Logs > Log Drains > Enable a log drain: General HTTP endpoint, log type Traffic logs, this URL, custom header Authorization = Bearer <API key>."],
    paste: (drain) => `${drain}&format=netlify`
  },
  {
    name: "CloudFront",
    needs: "batch",
    steps: ["Standard logs go to S3: copy them down (aws s3 sync) and ship them with this command."],
    paste: (_drain, siteId, origin) => `bun run cli ship ./cf-logs/*.gz --site ${siteId} --key <API key> --url ${origin}`
  },
  {
    name: "nginx / Apache",
    needs: "batch",
    steps: ["Ship the combined-format access logs (rotated .gz files too) with this command, or point a log shipper's HTTP sink (Vector) at the drain URL with &format=combined."],
    paste: (_drain, siteId, origin) => `bun run cli ship /var/log/nginx/access.log* --site ${siteId} --key <API key> --url ${origin}`
  }
]

/** What the account's plan allows: sources it lacks are listed once, under what the plan would give, not one wall each. */
export interface Entitlements {
  readonly plan: string
  readonly drain: boolean
  readonly batch: boolean
}

/** What each paid plan gives beyond the one below it (migrations/0001_init.sql, the plans table). */
export const PLAN_GIVES: Readonly<Record<string, string>> = {
  starter: "shipped log files, scans on request and every 72 hours instead of weekly, 3 brands, 50 monitored prompts, 3 API keys and 100,000 log events a month",
  growth: "log drains, scans every 24 hours, 10 brands, 250 monitored prompts, 10 API keys and 1,000,000 log events a month",
  enterprise: "scans every 6 hours, 100 brands, 2,500 monitored prompts, 50 API keys and 50,000,000 log events a month"
}

/**
 * A plan wall: what needs which plan, what that plan gives, and who changes the plan. This service has no
 * self-serve billing: the operator moves an account with `bun run cli plan set <email> <plan>`.
 */
export const planWall = (options: {
  readonly what: string
  readonly plan: string
  readonly current: string
  readonly gives?: string
  readonly email: string | null
  readonly id?: string
}) => {
  const command = `bun run cli plan set ${options.email ?? "<your email>"} ${options.plan}`
  return h(
    "div",
    { class: "notice plan-wall", "data-needs-plan": options.plan, id: options.id ?? null },
    h(
      "p",
      null,
      `${options.what} needs the ${planLabel(options.plan)} plan or higher; this account is on the ${planLabel(options.current)} plan. `,
      `The ${planLabel(options.plan)} plan gives ${options.gives ?? PLAN_GIVES[options.plan] ?? "more"}.`
    ),
    h(
      "p",
      null,
      "Plans are changed by whoever runs this service (its operator), not in this application: ask them to run ",
      h("code", null, command),
      " ",
      copyButton(() => command, "Copy", "Copy the plan command for your operator"),
      "."
    )
  )
}

/** The API keys page, coming back here afterwards (the keys page offers the way back). */
export const keysLink = (label = "Create an API key") =>
  h("a", { href: `#/settings/security/api-keys?return=${encodeURIComponent(location.hash || "#/brands")}`, class: "keys-link" }, label)

const sourceBlock = (source: Source, drain: string, siteId: string, origin: string) => {
  const text = source.paste(drain, siteId, origin)
  return h(
    "div",
    { "data-source": source.name },
    h("h3", null, source.name, " ", h("span", { class: "pill-plan" }, `${planLabel(PLAN_FOR[source.needs])} plan`)),
    ...source.steps.map((step) => h("p", { class: "muted" }, step.replace("<drain URL>", drain))),
    h("p", null, h("code", { class: "paste" }, text), " ", copyButton(() => text, "Copy", `Copy the ${source.name} set-up`)),
    h("p", { class: "muted" }, "Put an API key of this account in place of ", h("code", null, "<API key>"), ": ", keysLink(), " (you come back here).")
  )
}

export const logSourcesPanel = (
  drain: string,
  siteId: string,
  entitled?: Entitlements,
  open = false,
  extra: { readonly tag?: Node | null; readonly email?: string | null } = {}
) => {
  const origin = location.origin
  const usable = SOURCES.filter((source) => entitled === undefined || entitled[source.needs])
  const locked = SOURCES.filter((source) => !usable.includes(source))
  // One wall per plan the locked sources need (drains: Growth; log files: Starter), each with its short list.
  const walls = (["batch", "drain"] as const).flatMap((needs) => {
    const names = locked.filter((source) => source.needs === needs).map((source) => source.name)
    if (names.length === 0 || entitled === undefined) return []
    return [
      h(
        "div",
        { class: "locked-sources", "data-needs": needs },
        planWall({
          what: needs === "drain" ? `Log drains (${names.join(", ")})` : `Shipping log files (${names.join(", ")})`,
          plan: PLAN_FOR[needs],
          current: entitled.plan,
          email: extra.email ?? null
        })
      )
    ]
  })
  return h(
    "details",
    { class: "log-sources", open },
    h("summary", null, usable.length === 0 ? "Set up a log source (the tracking tag on your plan)" : `Set up a log source (${usable.map((s) => s.name).join(", ")})`),
    extra.tag ?? null,
    ...usable.map((source) => sourceBlock(source, drain, siteId, origin)),
    ...walls
  )
}
