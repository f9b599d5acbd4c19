/**
 * Is a request's User-Agent a person's? An AI referral is a request from a person (not a crawler)
 * whose referrer is an answer engine (docs/agents.md, "Who counts as a person"). The AI catalog
 * (Classifier) only knows AI crawlers and agents; everything else that is automated (search engine
 * crawlers, SEO and social bots, uptime monitors, link-preview fetchers, headless browsers, HTTP
 * libraries and command-line clients) is recognised by isbot, a maintained general bot detector.
 */
import { createIsbotFromList, list } from "isbot"
import type { Classification } from "./Classifier.js"

/** Automated clients isbot's list misses (checked against test/catalog/fixtures/user-agents.json). */
const MISSED_BY_ISBOT: ReadonlyArray<string> = [
  "uptime-kuma", // a self-hosted uptime monitor
  "^dalvik\\/" // Android's default HTTP client (apps, not the browser)
]

/** isbot's patterns and the few above, compiled once into one case-insensitive RegExp. */
const isBot = createIsbotFromList([...list, ...MISSED_BY_ISBOT])

/**
 * True when the User-Agent is a person's browser: not empty (every browser sends one), not recognised
 * by the AI catalog (`agent`: the Classifier's answer for the same User-Agent), and not a bot.
 */
export const isPerson = (ua: string, agent: Classification | null): boolean => ua !== "" && agent === null && !isBot(ua)
