import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentAccount } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { encodedJson } from "../platform/FastJson.js"
import {
  CitationsResponse,
  CompetitorCitationsResponse,
  CompetitorPromptsResponse,
  FanoutsResponse,
  GapResponse,
  IndustryMetricsResponse,
  IndustryRankingResponse,
  MentionsResponse,
  ModelResponse,
  PortfolioResponse,
  PromptsResponse,
  SnapshotsResponse,
  TopicsResponse
} from "./Api.js"
import { Visibility } from "./Visibility.js"

/**
 * Thin handlers: the account from the key, the service, and the answer in its wire form
 * (the service builds the Encoded shape of each response schema; FastJson.encodedJson).
 */
const account = Effect.map(CurrentAccount, ({ accountId }) => accountId)

export const VisibilityHttpLive = HttpApiBuilder.group(ServerApi, "visibility", (handlers) =>
  Effect.gen(function*() {
    const visibility = yield* Visibility
    return handlers
      .handle("snapshots", ({ path, urlParams }) =>
        Effect.flatMap(account, (id) => visibility.snapshots(id, path.slug, urlParams.range)).pipe(
          Effect.map((body) => encodedJson(SnapshotsResponse, body))
        ))
      .handle("mentions", ({ path, urlParams }) =>
        Effect.flatMap(account, (id) => visibility.mentions(id, path.slug, urlParams)).pipe(
          Effect.map((body) => encodedJson(MentionsResponse, body))
        ))
      .handle("prompts", ({ path }) =>
        Effect.flatMap(account, (id) => visibility.prompts(id, path.slug)).pipe(
          Effect.map((body) => encodedJson(PromptsResponse, body))
        ))
      .handle("portfolio", ({ urlParams }) =>
        Effect.flatMap(account, (id) => visibility.portfolio(id, urlParams.range)).pipe(
          Effect.map((body) => encodedJson(PortfolioResponse, body))
        ))
      .handle("model", ({ urlParams }) =>
        Effect.flatMap(account, (id) => visibility.model(id, urlParams.range, urlParams.brand)).pipe(
          Effect.map((body) => encodedJson(ModelResponse, body))
        ))
      .handle("topics", () =>
        Effect.flatMap(account, (id) => visibility.topics(id)).pipe(Effect.map((body) => encodedJson(TopicsResponse, body))))
  }))

export const CitationsHttpLive = HttpApiBuilder.group(ServerApi, "citations", (handlers) =>
  Effect.gen(function*() {
    const visibility = yield* Visibility
    return handlers
      .handle("citations", ({ urlParams }) =>
        Effect.flatMap(account, (id) => visibility.citations(id, urlParams.range, urlParams.brand)).pipe(
          Effect.map((body) => encodedJson(CitationsResponse, body))
        ))
      .handle("fanouts", ({ urlParams }) =>
        Effect.flatMap(account, (id) => visibility.fanouts(id, urlParams.range)).pipe(
          Effect.map((body) => encodedJson(FanoutsResponse, body))
        ))
  }))

export const IndustryHttpLive = HttpApiBuilder.group(ServerApi, "industry", (handlers) =>
  Effect.gen(function*() {
    const visibility = yield* Visibility
    return handlers
      .handle("metrics", ({ urlParams }) =>
        Effect.flatMap(account, (id) =>
          visibility.industryMetrics(id, urlParams)).pipe(
          Effect.map((body) => encodedJson(IndustryMetricsResponse, body))
        ))
      .handle("competitorCitations", ({ path, urlParams }) =>
        Effect.flatMap(account, (id) => visibility.competitorCitations(id, path.name, urlParams.range, urlParams.brand)).pipe(
          Effect.map((body) => encodedJson(CompetitorCitationsResponse, body))
        ))
      .handle("competitorPrompts", ({ path, urlParams }) =>
        Effect.flatMap(account, (id) => visibility.competitorPrompts(id, path.name, urlParams.range, urlParams.brand)).pipe(
          Effect.map((body) => encodedJson(CompetitorPromptsResponse, body))
        ))
      .handle("gap", ({ urlParams }) =>
        Effect.flatMap(account, (id) => visibility.gap(id, urlParams.range, urlParams.region, { topic: urlParams.topic, brand: urlParams.brand })).pipe(
          Effect.map((body) => encodedJson(GapResponse, body))
        ))
      .handle("ranking", ({ urlParams }) =>
        Effect.flatMap(account, (id) => visibility.ranking(id, urlParams.range, urlParams.topic, urlParams.brand, { engine: urlParams.engine, region: urlParams.region })).pipe(
          Effect.map((body) => encodedJson(IndustryRankingResponse, body))
        ))
  }))
