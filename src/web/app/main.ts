import { type ApiKey, type Brand, describeError, get, type Me, post, put } from "./api.js"
import { destroyCharts } from "./charts.js"
import { isScreen, screenFor } from "./screens/index.js"
import { append, clear, copyButton, formatDate, h } from "./dom.js"
import { agentsPage } from "./agents.js"
import { visibilityPage } from "./visibility.js"
import { keysLink, logSourcesPanel } from "./logSources.js"
import { ingestionHealthCard, webhooksPage } from "./webhooks.js"
import { PLAN_FOR, planLabel, VERTICAL_LABELS, verticalLabel } from "./labels.js"
import { checklist, drainUrl, startPage } from "./onboarding.js"
import { brands, emptyState, errorBox, forgetBrands, loadingState } from "./kit.js"
import { safeReturn } from "./returnTo.js"
import { slugFromName } from "../../brands/Slug.js"

/**
 * The web application: one page, hash routes, the cookie session of the dashboard surface.
 * Routes: #/signin #/signup #/start #/brands #/brands/<slug>/actions #/brands/<slug>/agents #/brands/<slug>/visibility
 * #/settings/security/api-keys #/settings/webhooks #/catalog (the agent catalog; screens/catalog.ts), and the brand screens of
 * screens/index.ts. Signed out, any route shows the sign-in form and returns to that route once signed in.
 */

const root = document.getElementById("app")!
let me: Me | null = null

export const go = (hash: string) => {
  if (location.hash === hash) void render()
  else location.hash = hash
}

const header = () =>
  h(
    "header",
    null,
    // Hash routes own the fragment, so the skip link is a button that moves focus to the page.
    h("button", { type: "button", class: "skip secondary", onclick: () => document.querySelector<HTMLElement>("main")?.focus() }, "Skip to content"),
    h("a", { class: "brand", href: me ? "#/brands" : "#/signin" }, "AI Visibility"),
    me
      ? h(
        "nav",
        { "aria-label": "Main" },
        navLink("#/start", "Get started"),
        navLink("#/brands", "Brands"),
        navLink("#/portfolio", "Portfolio"),
        navLink("#/catalog", "Agent catalog"),
        navLink("#/settings/security/api-keys", "Settings"),
        navLink("#/settings/webhooks", "Webhooks"),
        h("a", { href: "/api/public/v1/docs" }, "API reference")
      )
      : h("nav", { "aria-label": "Main" }),
    me
      ? h(
        "div",
        { class: "account" },
        h("span", { class: "muted" }, `${me.user.email} · ${me.account.name} (${planLabel(me.account.plan)} plan)`),
        h("button", { type: "button", class: "secondary", id: "signout", onclick: signOut }, "Sign out")
      )
      : null
  )

const navLink = (href: string, label: string) => {
  const active = location.hash === href || location.hash.startsWith(`${href}/`) || location.hash.startsWith(`${href}?`)
  return h("a", { href, class: active ? "active" : null, "aria-current": active ? "page" : null }, label)
}

const signOut = async () => {
  await post("/api/v1/auth/logout")
  me = null
  go("#/signin")
}

const loadMe = async () => {
  const result = await get<Me>("/api/v1/me")
  me = result.ok ? result.value : null
}

// ---------------------------------------------------------------------------
// Sign up, sign in
// ---------------------------------------------------------------------------

/** `next`: the page asked for while signed out (safeReturn), where a successful sign-in or sign-up goes. */
const authPage = (mode: "signin" | "signup", next: string | null) => {
  const message = h("div")
  const carry = next === null ? "" : `?next=${encodeURIComponent(next)}`
  const email = h("input", { id: "email", type: "email", autocomplete: "email", required: true })
  const password = h("input", {
    id: "password",
    type: "password",
    autocomplete: mode === "signup" ? "new-password" : "current-password",
    required: true,
    minlength: mode === "signup" ? 10 : null
  })
  const accountName = h("input", { id: "account_name", type: "text", required: true })
  const form = h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault()
        clear(message)
        const result = mode === "signup"
          ? await post("/api/v1/auth/signup", { email: email.value, password: password.value, account_name: accountName.value })
          : await post("/api/v1/auth/login", { email: email.value, password: password.value })
        if (!result.ok) {
          const text = result.error.status === 401 && mode === "signin" ? "The email or the password is not right." : describeError(result.error)
          return append(message, [errorBox(text)])
        }
        await loadMe()
        forgetBrands()
        go(next ?? "#/brands")
      }
    },
    h("label", { for: "email" }, "Email"),
    email,
    h("label", { for: "password" }, "Password"),
    password,
    mode === "signup" ? [h("label", { for: "account_name" }, "Account name"), accountName] : null,
    h("p", null, h("button", { type: "submit", id: "submit" }, mode === "signup" ? "Create account" : "Sign in"))
  )
  return h(
    "div",
    { class: "card narrow" },
    h("h1", null, mode === "signup" ? "Create your account" : "Sign in"),
    message,
    form,
    mode === "signup"
      ? h("p", { class: "muted" }, "Already have an account? ", h("a", { href: `#/signin${carry}` }, "Sign in"))
      : h("p", { class: "muted" }, "New here? ", h("a", { href: `#/signup${carry}` }, "Create an account"))
  )
}

// ---------------------------------------------------------------------------
// Settings > Security > API keys
// ---------------------------------------------------------------------------

/** `return`: the page that sent the person here to make a key (a log source's set-up), offered as the way back. */
const keysPage = (params: URLSearchParams) => {
  const back = safeReturn(params.get("return"))
  const page = h("div")
  const status = h("div")
  const created = h("div")
  const list = h("div")
  const name = h("input", { id: "key-name", type: "text", placeholder: "e.g. production server", maxlength: 80 })

  const confirmDialog = h("dialog", { id: "revoke-dialog" })

  const refresh = async () => {
    const result = await get<{ keys: ReadonlyArray<ApiKey>; count: number; limit: number }>("/api/v1/me/api-keys")
    clear(list)
    if (!result.ok) return append(list, [errorBox(describeError(result.error))])
    const active = result.value.keys.filter((key) => key.revoked_at === null).length
    const limit = result.value.limit
    append(list, [
      h("p", { class: "muted", id: "key-usage" }, `${active} of ${limit} active keys allowed by your plan.`),
      // After a downgrade: the server keeps the oldest keys up to the cap working and refuses the others.
      active > limit
        ? h(
          "p",
          { class: "notice", id: "keys-over-plan" },
          `Your plan allows ${limit} active key${limit === 1 ? "" : "s"}: the oldest ${limit === 1 ? "one works" : `${limit} work`}, ` +
            "and requests with the newer ones are refused until you revoke keys to fit or upgrade your plan."
        )
        : null,
      result.value.keys.length === 0
        ? emptyState("No API keys yet. Create one above to read your brands from your own scripts, a BI tool or an AI assistant (MCP).")
        : h("div", { class: "table-wrap", tabindex: 0, role: "region", "aria-label": "API keys" }, h(
          "table",
          { id: "keys-table" },
          h(
            "thead",
            null,
            h("tr", null, h("th", null, "Name"), h("th", null, "Key"), h("th", null, "Created"), h("th", null, "Last used"), h("th", null, "Status"), h("th"))
          ),
          h(
            "tbody",
            null,
            result.value.keys.map((key) =>
              h(
                "tr",
                { "data-key-id": key.id },
                h("td", null, key.name),
                h("td", null, h("code", null, key.prefix)),
                h("td", null, formatDate(key.created_at)),
                h("td", null, formatDate(key.last_used_at)),
                h(
                  "td",
                  null,
                  key.revoked_at
                    ? h("span", { class: "badge revoked" }, `Revoked ${formatDate(key.revoked_at)}`)
                    : h("span", { class: "badge active" }, "Active")
                ),
                h("td", null, key.revoked_at ? null : h("button", { type: "button", class: "danger revoke", "aria-label": `Revoke ${key.name}`, onclick: () => askRevoke(key) }, "Revoke"))
              )
            )
          )
        ))
    ])
  }

  const askRevoke = (key: ApiKey) => {
    clear(confirmDialog)
    append(confirmDialog, [
      h("h2", null, `Revoke "${key.name}"?`),
      h("p", null, `Requests with the key ${key.prefix} are refused from their next request on. This cannot be undone.`),
      h(
        "div",
        { class: "row" },
        h("button", { type: "button", class: "secondary", onclick: () => confirmDialog.close() }, "Cancel"),
        h("button", {
          type: "button",
          class: "danger",
          id: "confirm-revoke",
          onclick: async () => {
            confirmDialog.close()
            const result = await post<ApiKey>(`/api/v1/me/api-keys/${key.id}/revoke`)
            clear(status)
            if (!result.ok) append(status, [errorBox(describeError(result.error))])
            else append(status, [h("div", { class: "notice", role: "status" }, `Key "${key.name}" revoked.`)])
            await refresh()
          }
        }, "Revoke key")
      )
    ])
    confirmDialog.showModal()
  }

  const form = h(
    "form",
    {
      class: "row",
      onsubmit: async (event: Event) => {
        event.preventDefault()
        clear(status)
        clear(created)
        const result = await post<{ id: string; name: string; key: string; prefix: string }>("/api/v1/me/api-keys", { name: name.value })
        if (!result.ok) return append(status, [errorBox(describeError(result.error))])
        name.value = ""
        // The full key lives only in this panel: it is never stored, and "Done" removes it.
        const secret = result.value.key
        append(created, [
          h(
            "div",
            { class: "success", id: "new-key-panel" },
            h("strong", null, `Key "${result.value.name}" created. `),
            "Copy it now: it is shown this once and cannot be retrieved later. Store it in a secret manager.",
            h("p", null, h("code", { id: "new-key" }, secret), " ", copyButton(() => secret)),
            h("button", { type: "button", class: "secondary", onclick: () => clear(created) }, "Done")
          )
        ])
        await refresh()
      }
    },
    h("div", { class: "field grow" }, h("label", { for: "key-name" }, "Name"), name),
    h("div", null, h("button", { type: "submit", id: "create-key" }, "Create key"))
  )

  append(page, [
    h("div", { class: "crumbs" }, "Settings › Security › API keys"),
    back === null ? null : h("p", { class: "notice", id: "keys-return" }, "Made your key? ", h("a", { href: back }, "Go back to the set-up you came from"), "."),
    h("h1", null, "API keys"),
    h(
      "p",
      { class: "muted" },
      "A key reads every brand of this account through the customer API (",
      h("code", null, "Authorization: Bearer aivkey_…"),
      ") and the MCP server at ",
      h("code", null, "/mcp"),
      ". Rotate by creating the replacement, deploying it, then revoking the old key."
    ),
    h("div", { class: "card" }, h("h2", null, "Create a key"), form, status, created),
    h("div", { class: "card" }, h("h2", null, "Keys"), list),
    confirmDialog,
    passwordCard(),
    sessionsCard()
  ])
  void refresh()
  return page
}

/** Settings › Security: a new password needs the current one; every other session ends with it. */
const passwordCard = () => {
  const status = h("div")
  const current = h("input", { id: "current-password", type: "password", autocomplete: "current-password", required: true })
  const next = h("input", { id: "new-password", type: "password", autocomplete: "new-password", required: true, minlength: 10 })
  const form = h(
    "form",
    {
      id: "password-form",
      onsubmit: async (event: Event) => {
        event.preventDefault()
        clear(status)
        const result = await post("/api/v1/me/password", { current_password: current.value, new_password: next.value })
        current.value = next.value = ""
        if (!result.ok) return append(status, [errorBox(describeError(result.error))])
        append(status, [h("div", { class: "notice", role: "status" }, "Password changed. Every other session of yours has been signed out.")])
      }
    },
    h("label", { for: "current-password" }, "Current password"),
    current,
    h("label", { for: "new-password" }, "New password (at least 10 characters)"),
    next,
    h("p", null, h("button", { type: "submit", id: "change-password" }, "Change password"))
  )
  return h("section", { class: "card", "aria-labelledby": "password-title" }, h("h2", { id: "password-title" }, "Password"), form, status)
}

/** Settings › Security: "sign out everywhere" ends every session of the user, this one included. */
const sessionsCard = () => {
  const status = h("div")
  const dialog = h("dialog", { id: "sign-out-everywhere-dialog" })
  const ask = () => {
    clear(dialog)
    append(dialog, [
      h("h2", null, "Sign out everywhere?"),
      h("p", null, "Every session of yours ends, on every device and browser, this one included. You will need to sign in again."),
      h(
        "div",
        { class: "row" },
        h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Cancel"),
        h("button", {
          type: "button",
          class: "danger",
          id: "confirm-sign-out-everywhere",
          onclick: async () => {
            dialog.close()
            const result = await post("/api/v1/me/sign-out-everywhere")
            clear(status)
            if (!result.ok) return append(status, [errorBox(describeError(result.error))])
            me = null
            go("#/signin")
          }
        }, "Sign out everywhere")
      )
    ])
    dialog.showModal()
  }
  return h(
    "section",
    { class: "card", "aria-labelledby": "sessions-title" },
    h("h2", { id: "sessions-title" }, "Sessions"),
    h("p", { class: "muted" }, "Signed in on a device you no longer use, or worried someone else is? End every session at once."),
    h("p", null, h("button", { type: "button", class: "danger", id: "sign-out-everywhere", onclick: ask }, "Sign out everywhere")),
    status,
    dialog
  )
}

// ---------------------------------------------------------------------------
// Brands
// ---------------------------------------------------------------------------

const brandCard = (brand: Brand) => {
  const secretStatus = h("span", { role: "status" })
  const secretId = `drain-secret-${brand.brand_slug}`
  const secret = h("input", { id: secretId, type: "password", placeholder: "signing secret of the drain", autocomplete: "off" })
  const saveSecret = async (value: string | null) => {
    const result = await put(`/api/v1/me/brands/${brand.brand_slug}/drain-secret`, { secret: value })
    clear(secretStatus)
    secret.value = ""
    append(secretStatus, [
      result.ok ? h("span", { class: "muted" }, value ? " Secret saved: deliveries must now be signed." : " Secret removed.") : errorBox(describeError(result.error))
    ])
  }
  const url = drainUrl(brand.site_id)
  const plan = me?.plan
  const drainOk = plan?.drain_ingest ?? true
  const entitled = plan === undefined ? undefined : { plan: plan.id, drain: plan.drain_ingest, batch: plan.batch_ingest ?? plan.drain_ingest }
  return h(
    "section",
    { class: "card", "data-brand": brand.brand_slug, "aria-labelledby": `brand-${brand.brand_slug}` },
    h("h2", { id: `brand-${brand.brand_slug}` }, brand.brand_name),
    h("p", { class: "muted" }, `${brand.domain} · ${verticalLabel(brand.vertical)} · slug `, h("code", null, brand.brand_slug)),
    h(
      "p",
      { class: "actions" },
      h("a", { href: `#/brands/${brand.brand_slug}/actions` }, "What to fix first"),
      h("a", { href: `#/brands/${brand.brand_slug}/agents` }, "Agent dashboard"),
      h("a", { href: `#/brands/${brand.brand_slug}/visibility` }, "Visibility"),
      h("a", { href: `#/brands/${brand.brand_slug}/attribution` }, "AI referrals"),
      h("a", { href: `#/brands/${brand.brand_slug}/settings` }, "Settings, scan now, import"),
      h("a", { href: `#/start?brand=${brand.brand_slug}` }, "Set-up checklist")
    ),
    h("h3", null, "Site id"),
    h("p", null, h("code", { class: "site-id" }, brand.site_id), " ", copyButton(() => brand.site_id, "Copy", `Copy the site id of ${brand.brand_name}`)),
    // The drain URL only where the plan takes deliveries; otherwise the log sources below say which plan does.
    drainOk
      ? [
        h("h3", null, "Log drain URL ", h("span", { class: "pill-plan" }, `${planLabel(PLAN_FOR.drain)} plan`)),
        h("p", null, h("code", { class: "drain-url" }, url), " ", copyButton(() => url, "Copy", `Copy the log drain URL of ${brand.brand_name}`)),
        h(
          "p",
          { class: "muted" },
          "Paste this URL into your hosting platform's log drain and add the header ",
          h("code", null, "Authorization: Bearer <API key>"),
          " (",
          keysLink(),
          ")."
        )
      ]
      : null,
    logSourcesPanel(url, brand.site_id, entitled, false, {
      email: me?.user.email ?? null,
      tag: h("p", { "data-source": "Tracking tag" }, "Any plan: the tracking tag, copied from the ", h("a", { href: `#/brands/${brand.brand_slug}/agents` }, "agent dashboard"), ".")
    }),
    h("details", null,
      h("summary", null, "Drain signing secret (optional)"),
      h("label", { for: secretId }, "Signing secret"),
      h(
        "div",
        { class: "row" },
        secret,
        h("button", { type: "button", class: "secondary", onclick: () => secret.value.trim() !== "" && saveSecret(secret.value.trim()) }, "Save secret"),
        h("button", { type: "button", class: "secondary", onclick: () => saveSecret(null) }, "Remove secret"),
        secretStatus
      ),
      h("p", { class: "muted" }, "With a secret saved, deliveries must carry the platform's x-drain-signature; unsigned ones are refused.")),
    ingestionHealthCard(brand.brand_slug)
  )
}

const SLUG_HINT = "Made from the name; edit it if you like. Lowercase letters, digits, hyphens; it names the brand in URLs and the API."

const brandsPage = (params: URLSearchParams) => {
  const page = h("div")
  const list = h("div", null, loadingState())
  const onboarding = h("div")
  const status = h("div")
  const field = (id: string, label: string, input: HTMLElement, hint?: string) =>
    h("div", { class: "field" }, h("label", { for: id }, label), input, hint ? h("span", { class: "hint", id: `${id}-hint` }, hint) : null)
  const slug = h("input", { id: "brand-slug", placeholder: "acme", pattern: "[a-z0-9-]+", maxlength: 64, required: true, "aria-describedby": "brand-slug-hint" })
  const name = h("input", { id: "brand-name", placeholder: "Acme", required: true })
  const slugHint = h("span", { class: "hint", id: "brand-slug-hint", "aria-live": "polite" }, SLUG_HINT)
  // The slug follows the name as it is typed until the person edits it; emptied, it follows again.
  let slugEdited = false
  slug.addEventListener("input", () => {
    slugEdited = slug.value !== ""
    slugHint.textContent = SLUG_HINT
  })
  name.addEventListener("input", () => {
    if (slugEdited) return
    const derived = slugFromName(name.value)
    slug.value = derived ?? ""
    slugHint.textContent = derived !== null || name.value.trim() === ""
      ? SLUG_HINT
      : "This name has no Latin letters or digits to make a short name from: type one (for example the brand's name in Latin letters, or its website's name)."
  })
  const domain = h("input", { id: "brand-domain", placeholder: "acme.com", required: true })
  const vertical = h("select", { id: "brand-vertical" }, Object.entries(VERTICAL_LABELS).map(([v, label]) => h("option", { value: v }, label)))

  const refresh = async () => {
    forgetBrands()
    const result = await get<{ brands: ReadonlyArray<Brand>; count: number; limit: number }>("/api/v1/me/brands")
    clear(list)
    clear(onboarding)
    if (!result.ok) return append(list, [errorBox(`Your brands could not be loaded. ${describeError(result.error)}`)])
    if (me) append(onboarding, [checklist(me, result.value.brands, null, true)])
    append(list, [
      h("p", { class: "muted" }, `${result.value.count} of ${result.value.limit} brands allowed by your ${planLabel(me?.plan.id ?? "")} plan.`),
      result.value.brands.length === 0
        ? emptyState("No brand yet. Add the brand you want to watch with the form below: it gets a site id for your logs and a place for competitors and prompts.")
        : null,
      result.value.brands.map(brandCard)
    ])
  }

  const form = h(
    "form",
    {
      class: "form-row",
      onsubmit: async (event: Event) => {
        event.preventDefault()
        clear(status)
        const result = await post<Brand>("/api/v1/me/brands", {
          brand_slug: slug.value.trim(),
          brand_name: name.value.trim(),
          domain: domain.value.trim(),
          vertical: vertical.value
        })
        if (!result.ok) return append(status, [errorBox(`The brand was not added. ${describeError(result.error)}`)])
        slug.value = name.value = domain.value = ""
        slugEdited = false
        await refresh()
      }
    },
    field("brand-name", "Name", name),
    field("brand-domain", "Website", domain),
    h("div", { class: "field" }, h("label", { for: "brand-slug" }, "Short name (slug)"), slug, slugHint),
    field("brand-vertical", "Industry", vertical),
    h("div", { class: "field" }, h("button", { type: "submit", id: "create-brand" }, "Add brand"))
  )
  append(page, [
    h("h1", null, "Brands"),
    onboarding,
    list,
    h("section", { class: "card", id: "add-brand", "aria-labelledby": "add-brand-title" }, h("h2", { id: "add-brand-title" }, "Add a brand"), form, status)
  ])
  void refresh().then(() => {
    if (params.get("add") === "1") {
      document.getElementById("add-brand")?.scrollIntoView()
      name.focus()
    }
  })
  return page
}

// ---------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------

const TITLES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^signup/, "Create your account"],
  [/^signin/, "Sign in"],
  [/^start/, "Getting started"],
  [/^catalog/, "Agent catalog"],
  [/^settings\/webhooks/, "Webhooks"],
  [/^settings/, "API keys"]
]

/** While the server still fills this workspace in the background (the demo), a line saying so on every page. */
const fillNotice = async () => {
  if (me?.data_fill?.status !== "filling") return null
  await loadMe()
  const fill = me?.data_fill
  if (fill?.status !== "filling") return null
  return h(
    "p",
    { class: "notice", role: "status", id: "data-fill" },
    `The demo workspace is still filling in: ${fill.days_filled} of ${fill.days} days of answers written, the newest first. ` +
      "Reload in a minute to see the rest."
  )
}

const render = async () => {
  destroyCharts()
  const [path = "", query = ""] = location.hash.replace(/^#/, "").split("?")
  const params = new URLSearchParams(query)
  const parts = path.split("/").filter((part) => part !== "")
  if (parts[0] !== "signin" && parts[0] !== "signup" && me === null) await loadMe()
  clear(root)
  let page: HTMLElement
  // The page asked for: from ?next= on the sign-in pages, else the route itself when it needs a session.
  const next = parts[0] === "signin" || parts[0] === "signup" ? safeReturn(params.get("next")) : safeReturn(location.hash)
  if (parts[0] === "signup") page = authPage("signup", next)
  else if (parts[0] === "signin" || me === null) page = authPage("signin", next)
  else if (parts[0] === "start") page = startPage(me, await brands(), params)
  else if (parts[0] === "settings" && parts[1] === "webhooks") page = webhooksPage()
  else if (parts[0] === "settings") page = keysPage(params)
  else if (parts[0] === "brands" && parts[1] && parts[2] === "agents") page = agentsPage(parts[1], params)
  else if (isScreen(parts)) page = screenFor(parts, params)
  else if (parts[0] === "brands" && parts[1] && parts[2] === "visibility") page = visibilityPage(parts[1], params)
  else page = brandsPage(params)
  const title = me === null && parts[0] !== "signup" ? "Sign in" : TITLES.find(([pattern]) => pattern.test(parts.join("/")))?.[1] ?? "Brands"
  document.title = `${title} · AI Visibility`
  append(root, [header(), h("main", { tabindex: -1 }, me === null ? null : await fillNotice(), page)])
}

window.addEventListener("hashchange", () => void render())
void render()
