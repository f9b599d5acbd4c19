import type { PromptsResponse as PromptsResponseSchema } from "../../../visibility/Api.js"
import { describeError, get, type Me, post } from "../api.js"
import { brandNav } from "./nav.js"
import { formatDate, h } from "../dom.js"
import { brandTitle, dataTable, emptyState, errorState, field, humanize, INTENTS, navigate, pageHead, section, select } from "../kit.js"

/**
 * The monitored prompts of a brand: the questions the answer engines are asked on every scan.
 * State: ?topic=<topic> narrows the list to one topic.
 */

type PromptsResponse = typeof PromptsResponseSchema.Encoded
type Prompt = PromptsResponse["prompts"][number]

const SOURCE_LABELS: Readonly<Record<string, string>> = {
  manual: "Added by you",
  suggested: "Suggested",
  imported: "Imported",
  search_query: "From search queries"
}

export const promptsScreen = (slug: string, params: URLSearchParams) => {
  const path = `/brands/${slug}/prompts`
  const topicFilter = params.get("topic") ?? ""
  const list = section("Prompts", "prompt-list")
  const usage = h("p", { id: "prompt-usage", class: "muted" })
  const status = h("div", { role: "status" })
  const cap = h("div")

  const text = h("input", { type: "text", required: true, maxlength: 500, placeholder: "e.g. best crm for small teams" })
  const topic = h("input", { type: "text", maxlength: 100, list: "prompt-topics", placeholder: "e.g. crm software" })
  const topics = h("datalist", { id: "prompt-topics" })
  const intent = select([["", "Not set"], ...INTENTS.map((i) => [i, humanize(i)] as const)], "")
  const submit = h("button", { type: "submit", id: "add-prompt" }, "Add prompt")

  const refresh = async () => {
    const [result, me] = await Promise.all([get<PromptsResponse>(`/api/v1/me/brands/${slug}/prompts`), get<Me>("/api/v1/me")])
    if (!result.ok) return list.fill(errorState("The prompts", result.error))
    const { count, limit, prompts, used_total } = result.value
    const atCap = used_total >= limit
    usage.textContent = `${used_total} of ${limit} monitored prompts in use across your brands (${count} on this brand).`
    submit.disabled = atCap
    cap.replaceChildren(
      atCap
        ? h("div", { class: "notice", id: "prompt-cap" }, `You are using all ${limit} monitored prompts your ${me.ok ? `${humanize(me.value.plan.id)} ` : ""}plan allows. Upgrade your plan to monitor more questions.`)
        : ""
    )
    const themes = [...new Set(prompts.map((p) => p.topic).filter((t) => t !== ""))].sort()
    topics.replaceChildren(...themes.map((t) => h("option", { value: t })))
    const shown = topicFilter === "" ? prompts : prompts.filter((p) => p.topic === topicFilter)
    const filter = select([["", "All topics"], ...themes.map((t) => [t, t] as const)], topicFilter)
    filter.addEventListener("change", () => navigate(path, params, { topic: filter.value }))
    list.fill(
      prompts.length === 0
        ? emptyState(
          "This brand has no monitored prompts yet, so the answer engines have nothing to be asked about it.",
          "Add the questions your customers ask an AI assistant with the form above."
        )
        : h("div", null, h("div", { class: "form-row" }, field("prompt-topic-filter", "Topic", filter)), dataTable(
          ["Prompt", "Topic", "Intent", "Source", "Added"],
          shown.map((p) => [p.prompt, p.topic === "" ? "—" : p.topic, p.intent === "" ? "—" : humanize(p.intent), SOURCE_LABELS[p.source] ?? humanize(p.source), formatDate(p.created_at).slice(0, 10)]),
          [],
          { id: "prompts-table", "aria-label": "Monitored prompts" }
        ))
    )
  }

  const form = h(
    "form",
    {
      class: "form-row",
      onsubmit: async (event: Event) => {
        event.preventDefault()
        if (text.value.trim() === "") return
        submit.disabled = true
        const body: Record<string, string> = { prompt: text.value.trim() }
        if (topic.value.trim() !== "") body["topic"] = topic.value.trim()
        if (intent.value !== "") body["intent"] = intent.value
        const result = await post<Prompt>(`/api/v1/me/brands/${slug}/prompts`, body)
        submit.disabled = false
        if (!result.ok) return status.replaceChildren(h("div", { class: "error", role: "alert" }, `The prompt was not added. ${describeError(result.error)}`))
        text.value = ""
        status.replaceChildren(h("div", { class: "success" }, `Added “${result.value.prompt}”. It is asked on the next scan.`))
        await refresh()
      }
    },
    h("div", { class: "field grow" }, h("label", { for: "prompt-text" }, "Prompt"), Object.assign(text, { id: "prompt-text" })),
    field("prompt-topic", "Topic (optional)", topic),
    field("prompt-intent", "Intent (optional)", intent),
    h("div", { class: "field" }, h("span", { "aria-hidden": "true" }, " "), submit),
    topics
  )

  void refresh()
  return h(
    "div",
    { id: "prompts-screen" },
    brandNav(slug, "prompts"),
    pageHead(brandTitle(slug, h("h1"), (name) => `Monitored prompts · ${name}`), "The questions the AI answer engines are asked about your market on every scan."),
    h("section", { class: "card", "aria-labelledby": "add-prompt-title" }, h("h2", { id: "add-prompt-title" }, "Add a prompt"), usage, cap, form, status),
    list.element
  )
}
