import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentAccount } from "../accounts/Api.js"
import { ServerApi } from "../api.js"
import { Actions } from "./Actions.js"

export const ActionsHttpLive = HttpApiBuilder.group(ServerApi, "actions", (handlers) =>
  Effect.gen(function*() {
    const actions = yield* Actions
    return handlers.handle("list", ({ path, urlParams }) =>
      Effect.flatMap(CurrentAccount, ({ accountId }) => actions.list(accountId, path.slug, urlParams.range)))
  }))
