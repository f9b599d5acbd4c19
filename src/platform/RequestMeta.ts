import { Context, Effect, Option } from "effect"

/** Facts about the request being served, gathered on the way in and read by its log line on the way out. */
export interface RequestFacts {
  readonly requestId: string
  /** Set by the auth middlewares once they know the account. */
  accountId: number | null
}

/** Present while a request is served; nested in-process requests (twins, MCP tools) see the outer one. */
export class RequestMeta extends Context.Tag("RequestMeta")<RequestMeta, RequestFacts>() {}

/** Notes the authenticated account for the request log line (no-op outside a request). */
export const noteAccount = (accountId: number) =>
  Effect.serviceOption(RequestMeta).pipe(
    Effect.map((meta) => {
      if (Option.isSome(meta) && meta.value.accountId === null) meta.value.accountId = accountId
    })
  )
