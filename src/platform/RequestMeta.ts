import { Context, Effect, Option } from "effect"

/** Facts about the request being served, gathered on the way in and read by its log line on the way out. */
export interface RequestFacts {
  readonly requestId: string
  /** Set by the auth middlewares once they know the account. */
  accountId: number | null
}

/** Present while a request is served; nested in-process requests (twins, MCP tools) see the outer one. */
export class RequestMeta extends Context.Tag("RequestMeta")<RequestMeta, RequestFacts>() {}

/**
 * Notes the authenticated account in the request's facts, when there are facts (outside a request there
 * are none) and no account is noted yet (a nested in-process request keeps the outer one's).
 */
export const recordAccount = (meta: Option.Option<RequestFacts>, accountId: number): void => {
  if (Option.isSome(meta) && meta.value.accountId === null) meta.value.accountId = accountId
}

/** Notes the authenticated account for the request log line (no-op outside a request). */
export const noteAccount = (accountId: number) =>
  Effect.map(Effect.serviceOption(RequestMeta), (meta) => recordAccount(meta, accountId))
