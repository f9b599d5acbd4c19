import {
  ArcElement,
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  DoughnutController,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip
} from "chart.js"
import { h } from "./dom.js"

Chart.register(
  ArcElement,
  BarController,
  BarElement,
  CategoryScale,
  DoughnutController,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip
)
// No animation: pages draw at once (and screenshots show the final chart).
Chart.defaults.animation = false

export const PALETTE = ["#2563eb", "#16a34a", "#f59e0b", "#dc2626", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#ea580c"]

/** Charts of the current page, destroyed when the page changes. */
const live: Array<Chart> = []

export const destroyCharts = () => {
  for (const chart of live.splice(0)) chart.destroy()
}

/** A canvas in a sized box, drawn by Chart.js. */
export const chart = (label: string, config: ChartConfiguration, height = 260) => {
  const canvas = h("canvas", { role: "img", "aria-label": label })
  const box = h("div", { class: `chart h${height}` }, canvas)
  // Drawn once the box is in the document (Chart.js measures its parent).
  queueMicrotask(() => {
    live.push(new Chart(canvas, { ...config, options: { responsive: true, maintainAspectRatio: false, ...config.options } }))
  })
  return box
}
