import { actionsScreen } from "./actions.js"
import { attributionScreen } from "./attribution.js"
import { catalogScreen } from "./catalog.js"
import { citationsScreen } from "./citations.js"
import { competitorsScreen } from "./competitors.js"
import { fanoutsScreen } from "./fanouts.js"
import { mentionsScreen } from "./mentions.js"
import { portfolioScreen } from "./portfolio.js"
import { promptsScreen } from "./prompts.js"
import { rankingScreen } from "./ranking.js"
import { searchPerformanceScreen } from "./searchPerformance.js"
import { settingsScreen } from "./settings.js"
import { topicsScreen } from "./topics.js"

/** Screens by route: #/brands/<slug>/<screen>?state, #/portfolio?state and #/catalog?state. */
const BRAND: Readonly<Record<string, (slug: string, params: URLSearchParams) => HTMLElement>> = {
  actions: actionsScreen,
  settings: settingsScreen,
  competitors: competitorsScreen,
  prompts: promptsScreen,
  mentions: mentionsScreen,
  citations: citationsScreen,
  fanouts: fanoutsScreen,
  topics: topicsScreen,
  ranking: rankingScreen,
  attribution: attributionScreen,
  "search-performance": searchPerformanceScreen
}

/** Whether a route (its path segments) is one of these screens. */
export const isScreen = (parts: ReadonlyArray<string>) =>
  parts[0] === "portfolio" || parts[0] === "catalog" || (parts[0] === "brands" && !!parts[1] && Object.hasOwn(BRAND, parts[2] ?? ""))

/** The screen of a route that isScreen accepts. */
export const screenFor = (parts: ReadonlyArray<string>, params: URLSearchParams): HTMLElement =>
  parts[0] === "portfolio" ? portfolioScreen(params) : parts[0] === "catalog" ? catalogScreen(params) : BRAND[parts[2]!]!(parts[1]!, params)
