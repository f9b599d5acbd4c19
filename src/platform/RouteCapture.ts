import { Context, Option, type Tracer } from "effect"

/**
 * The router names the matched route template on the request's parent span (`http.route`). The
 * tracer is off (building spans nobody reads doubled the client cost of every SQL query,
 * bench/brands-rps.ts), so this stand-in span catches the name for the request log and the
 * metrics, and does nothing else.
 */
export interface RouteCapture extends Tracer.Span {
  route: string | undefined
}

const NO_ATTRIBUTES: ReadonlyMap<string, unknown> = new Map()
const STARTED = { _tag: "Started", startTime: 0n } as const
const NO_LINKS: Array<Tracer.SpanLink> = []

/** The span's fixed parts live on its prototype: a request allocates one object with one field. */
const routeCaptureProto: Omit<RouteCapture, "route"> = {
  _tag: "Span",
  name: "http.request",
  spanId: "route-capture",
  traceId: "route-capture",
  parent: Option.none(),
  context: Context.empty(),
  status: STARTED,
  attributes: NO_ATTRIBUTES,
  links: NO_LINKS,
  sampled: false,
  kind: "server",
  end() {},
  attribute(this: RouteCapture, key: string, value: unknown) {
    if (key === "http.route" && typeof value === "string") this.route = value
  },
  event() {},
  addLinks() {}
}

export const captureRoute = (): RouteCapture => {
  const capture: RouteCapture = Object.create(routeCaptureProto)
  capture.route = undefined
  return capture
}
