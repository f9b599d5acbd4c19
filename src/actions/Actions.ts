import { Context, Effect, Layer } from "effect"
import { Agents, AgentsLive } from "../agents/Agents.js"
import { Brands, BrandsLive } from "../brands/Brands.js"
import type { NotFound } from "../platform/HttpErrors.js"
import { type Range, rangeDays, rangeOrDefault } from "../platform/Schemas.js"
import { Visibility, VisibilityLive } from "../visibility/Visibility.js"
import type { Action, ActionsResponse } from "./Api.js"

/**
 * What to fix first (docs/actions.md): five fixed rules over figures the agents and visibility services
 * already read from their rollups (no raw hits), each action citing the numbers the other endpoints
 * report for the same range.
 */

export type ActionList = typeof ActionsResponse.Type

export interface ActionsShape {
  readonly list: (accountId: number, slug: string, range: Range | undefined) => Effect.Effect<ActionList, NotFound>
}

export class Actions extends Context.Tag("Actions")<Actions, ActionsShape>() {}

/** The rules' thresholds (docs/actions.md). */
export const RULES = {
  fixCrawlerErrors: { minHits: 10, minErrorPercent: 20 },
  blockSpoofed: { minHits: 20, minSpoofedPercent: 20 },
  earnCitationsFrom: { minAnswers: 3 },
  winPrompt: { minAnswers: 5, minCompetitorPercent: 50, maxBrandPercent: 10 }
} as const
export const MAX_ACTIONS = 20
export const LLMS_TXT = "/llms.txt"

const KIND_ORDER: ReadonlyArray<Action["kind"]> = [
  "fix_crawler_errors",
  "serve_llms_txt",
  "block_spoofed",
  "earn_citations_from",
  "win_prompt"
]

const round4 = (x: number) => Math.round(x * 10_000) / 10_000
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const percent = (x: number) => `${(Math.round(x * 1000) / 10).toString()}%`
const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`
/** "a", "a and b", "a, b and 2 others". */
const names = (list: ReadonlyArray<string>, most = 3) => {
  if (list.length <= 1) return list[0] ?? ""
  const shown = list.slice(0, Math.min(most, list.length))
  const rest = list.length - shown.length
  if (rest === 0) return `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`
  return `${shown.join(", ")} and ${count(rest, "other")}`
}
const query = (params: Record<string, string>) => new URLSearchParams(params).toString()

/** An action with the key it sorts by within its kind and its name. */
interface Ranked {
  readonly action: Action
  readonly key: number
  readonly name: string
}

export const ActionsLive = Layer.effect(
  Actions,
  Effect.gen(function*() {
    const brands = yield* Brands
    const agents = yield* Agents
    const visibility = yield* Visibility

    const list: ActionsShape["list"] = (accountId, slug, rangeParam) =>
      Effect.gen(function*() {
        const brand = yield* brands.row(accountId, slug)
        const range = rangeOrDefault(rangeParam)
        const days = `in the last ${rangeDays(range)} days`
        const base = `#/brands/${encodeURIComponent(brand.slug)}`
        const [errorPages, llms, verdicts, gap, prompts] = yield* Effect.all([
          agents.errorPages(accountId, brand.slug, range, { ...RULES.fixCrawlerErrors, limit: MAX_ACTIONS }),
          agents.pathStatuses(accountId, brand.slug, range, LLMS_TXT),
          agents.botVerdicts(accountId, brand.slug, range),
          visibility.brandGap(accountId, brand.slug, range),
          visibility.promptCompetition(accountId, brand.slug, range)
        ], { concurrency: "unbounded" })

        const ranked: Array<Ranked> = []

        for (const page of errorPages) {
          const statuses = Object.entries(page.statuses).sort(([, a], [, b]) => b - a).map(([code, n]) => `${code}: ${n}`)
          const bots = page.bots.map((b) => b.bot)
          ranked.push({
            key: page.errors,
            name: page.path,
            action: {
              kind: "fix_crawler_errors",
              title: `Fix the errors AI crawlers get on ${page.path}`,
              why: `${page.errors.toLocaleString("en-US")} of ${count(page.hits, "AI crawler hit")} on ${page.path} ${days} ` +
                `(${percent(page.errors / page.hits)}) answered an error (${statuses.join(", ")}), from ${names(bots)}.`,
              evidence: { path: page.path, error_hits: page.errors, hits: page.hits, statuses: page.statuses, bots },
              link: `${base}/agents?${query({ range, status: "error", q: page.path })}`
            }
          })
        }

        if (llms.hits > 0 && llms.statuses["404"] === llms.hits) {
          const bots = llms.bots.map((b) => b.bot)
          ranked.push({
            key: llms.hits,
            name: LLMS_TXT,
            action: {
              kind: "serve_llms_txt",
              title: "Serve an /llms.txt file",
              why: `AI crawlers asked for /llms.txt ${count(llms.hits, "time")} ${days} and got 404 every time ` +
                `(${names(bots)}): a short Markdown guide to the site there tells them what matters.`,
              evidence: { hits: llms.hits, bots },
              link: `${base}/agents?${query({ range, q: LLMS_TXT })}`
            }
          })
        }

        for (const bot of verdicts) {
          const rule = RULES.blockSpoofed
          if (bot.hits < rule.minHits || bot.spoofed * 100 < bot.hits * rule.minSpoofedPercent) continue
          ranked.push({
            key: bot.spoofed,
            name: bot.bot,
            action: {
              kind: "block_spoofed",
              title: `Block requests posing as ${bot.bot}`,
              why: `${bot.spoofed.toLocaleString("en-US")} of ${count(bot.hits, "hit")} claiming to be ${bot.bot} ${days} ` +
                `(${percent(bot.spoofed / bot.hits)}) failed its operator's verification: they are not ${bot.bot}.`,
              evidence: { bot: bot.bot, spoofed_hits: bot.spoofed, hits: bot.hits },
              link: `${base}/agents?${query({ range, bot: bot.bot, verification: "spoofed" })}`
            }
          })
        }

        for (const domain of gap) {
          if (domain.opportunity < RULES.earnCitationsFrom.minAnswers) continue
          ranked.push({
            key: domain.opportunity,
            name: domain.domain,
            action: {
              kind: "earn_citations_from",
              title: `Earn citations from ${domain.domain}`,
              why: `${count(domain.opportunity, "AI answer")} naming ${names(domain.competitors) || "a competitor"} cited ` +
                `${domain.domain} ${days}; no answer naming ${brand.name} did.`,
              evidence: { domain: domain.domain, answers: domain.opportunity, competitors: domain.competitors },
              link: `${base}/citations?${query({ range })}`
            }
          })
        }

        let answers = 0
        let answered = 0
        for (const prompt of prompts) {
          answers += prompt.answers
          if (prompt.answers > 0) answered++
          const rule = RULES.winPrompt
          if (prompt.answers < rule.minAnswers || prompt.brandMentions * 100 > prompt.answers * rule.maxBrandPercent) continue
          // The competitor with the highest rate (the list is by name, so the first of equals wins).
          const top = prompt.competitors.reduce<(typeof prompt.competitors)[number] | undefined>(
            (best, c) => (best === undefined || c.mentions > best.mentions ? c : best),
            undefined
          )
          if (top === undefined || top.mentions * 100 < prompt.answers * rule.minCompetitorPercent) continue
          const brandRate = prompt.brandMentions / prompt.answers
          const competitorRate = top.mentions / prompt.answers
          ranked.push({
            key: competitorRate - brandRate,
            name: prompt.prompt,
            action: {
              kind: "win_prompt",
              title: `Win the prompt "${prompt.prompt}"`,
              why: `${top.name} was named in ${top.mentions.toLocaleString("en-US")} of the ${count(prompt.answers, "answer")} to ` +
                `"${prompt.prompt}" ${days} (${percent(competitorRate)}); ${brand.name} in ${prompt.brandMentions.toLocaleString("en-US")} ` +
                `(${percent(brandRate)}).`,
              evidence: {
                prompt: prompt.prompt,
                answers: prompt.answers,
                brand_rate: round4(brandRate),
                competitor: top.name,
                competitor_rate: round4(competitorRate)
              },
              link: `${base}/competitors?${query({ competitor: top.name, range })}`
            }
          })
        }

        const order = new Map(KIND_ORDER.map((kind, i) => [kind, i]))
        const actions = ranked
          .sort((a, b) =>
            order.get(a.action.kind)! - order.get(b.action.kind)! || b.key - a.key || byName(a.name, b.name)
          )
          .slice(0, MAX_ACTIONS)
          .map((r) => r.action)
        return {
          brand: brand.slug,
          range,
          actions,
          count: actions.length,
          looked_at: {
            crawler_hits: verdicts.reduce((sum, b) => sum + b.hits, 0),
            bots: verdicts.length,
            answers,
            prompts: answered,
            gap_domains: gap.length
          }
        } satisfies ActionList
      })

    return { list }
  })
).pipe(Layer.provide([BrandsLive, VisibilityLive, AgentsLive]))
