/** A tiny DOM builder: no framework, no innerHTML, so nothing from the API is ever parsed as HTML. */

type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: ReadonlyArray<Child | ReadonlyArray<Child>>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === "function") element.addEventListener(name.slice(2).toLowerCase(), value)
    else if (value === true) element.setAttribute(name, "")
    else element.setAttribute(name, String(value))
  }
  append(element, children)
  return element
}

export const append = (parent: Node, children: ReadonlyArray<Child | ReadonlyArray<Child>>) => {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child)
  }
}

export const clear = (element: Element) => {
  while (element.firstChild) element.removeChild(element.firstChild)
}

export const formatDate = (value: string | null | undefined) => {
  if (!value) return "never"
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? value : date.toISOString().replace("T", " ").slice(0, 16) + " UTC"
}

export const formatNumber = (value: number) => value.toLocaleString("en-US")
export const formatPercent = (value: number) => `${(value * 100).toFixed(1)}%`

/** Copies text to the clipboard; falls back to a selected hidden field where the Clipboard API is unavailable. */
export const copyText = async (text: string): Promise<boolean> => {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const field = h("textarea", { "aria-hidden": "true", class: "offscreen" }, text)
    document.body.appendChild(field)
    field.select()
    const done = document.execCommand("copy")
    field.remove()
    return done
  }
}

export const copyButton = (text: () => string, label = "Copy", accessibleName?: string) => {
  const button: HTMLButtonElement = h("button", {
    type: "button",
    class: "secondary",
    "aria-label": accessibleName ?? null,
    onclick: async () => {
      const ok = await copyText(text())
      button.textContent = ok ? "Copied" : "Copy failed"
      if (accessibleName) button.setAttribute("aria-label", ok ? "Copied" : "Copy failed")
      setTimeout(() => {
        button.textContent = label
        if (accessibleName) button.setAttribute("aria-label", accessibleName)
      }, 2000)
    }
  }, label)
  return button
}
