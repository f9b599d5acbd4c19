import { Context, Effect, Layer, Option } from "effect"

/**
 * Data an account's workspace is still being filled with in the background (the demo workspace of
 * `DEMO=1`: the server listens once its account, brands, prompts and key exist, and writes its days
 * of observations and crawler traffic afterwards). The dashboard's GET /api/v1/me reports it, so the
 * web application can say the workspace is still filling in. Held by the process doing the filling.
 */
export interface FillProgress {
  readonly status: "filling" | "ready" | "failed"
  /** Days of data the fill writes, and those written so far (every brand's observations of the day). */
  readonly days: number
  readonly daysFilled: number
  readonly startedAt: Date
  readonly finishedAt: Date | null
}

export interface WorkspaceFillShape {
  readonly of: (accountId: number) => Effect.Effect<Option.Option<FillProgress>>
  readonly set: (accountId: number, progress: FillProgress) => Effect.Effect<void>
}

export class WorkspaceFill extends Context.Tag("WorkspaceFill")<WorkspaceFill, WorkspaceFillShape>() {}

export const WorkspaceFillLive = Layer.sync(WorkspaceFill, () => {
  const fills = new Map<number, FillProgress>()
  return {
    of: (accountId) => Effect.sync(() => Option.fromNullable(fills.get(accountId))),
    set: (accountId, progress) => Effect.sync(() => void fills.set(accountId, progress))
  }
})
