// Draws the dashboard from the report's dataset "metrics".
//
// The dataset is read each time the page opens, from _data/metrics beside
// this page: a relative path, since the report is served from an origin of
// its own whose name the template cannot know. Nothing else is loaded and
// no library is used, so the page works wherever the report is served.
// Every text from the dataset goes in with textContent, never as markup,
// so a label cannot inject anything into the page.
(function () {
  "use strict";

  const DATASET = "_data/metrics";
  const SVG = "http://www.w3.org/2000/svg"; // a namespace name, never fetched

  const byId = (id) => document.getElementById(id);

  // show makes one of the panels visible: "loading", "empty", "error" or
  // "figures".
  function show(which) {
    for (const name of ["loading", "empty", "error"]) {
      byId("state-" + name).hidden = name !== which;
    }
    byId("figures").hidden = which !== "figures";
  }

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
  const compact = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });

  // formatValue writes a number in the reader's locale, and any other
  // value as it is, a missing one as a dash.
  function formatValue(v) {
    if (v === undefined || v === null || v === "") return "—";
    const n = Number(v);
    return Number.isFinite(n) ? number.format(n) : String(v);
  }

  // A bare date ("2026-03-06") is a calendar day, read in UTC so that it
  // shows as that day in every time zone.
  function formatDate(s, options) {
    const d = new Date(s);
    if (Number.isNaN(d.getTime())) return String(s);
    const utc = /^\d{4}-\d{2}-\d{2}$/.test(String(s));
    return d.toLocaleDateString(undefined, Object.assign({}, options, utc ? { timeZone: "UTC" } : {}));
  }

  function renderUpdated(updatedAt) {
    const p = byId("updated");
    p.textContent = "";
    const d = new Date(updatedAt);
    if (!updatedAt || Number.isNaN(d.getTime())) return;
    const time = el("time", "", d.toLocaleString(undefined, { dateStyle: "long", timeStyle: "short" }));
    time.dateTime = d.toISOString();
    p.append("Figures as of ", time);
  }

  function renderKpis(kpis) {
    const list = byId("kpis");
    list.textContent = "";
    byId("kpis-heading").parentElement.hidden = kpis.length === 0;
    for (const k of kpis) {
      const card = el("li", "card");
      card.append(el("p", "kpi-label", String(k.label ?? "")));

      const value = el("p", "kpi-value", formatValue(k.value));
      if (k.unit) {
        // "%" sits against the number; words and symbols like "ms" get a gap.
        value.append(el("span", "unit" + (k.unit === "%" ? " tight" : ""), String(k.unit)));
      }
      card.append(value);

      const change = Number(k.change);
      if (k.change !== undefined && k.change !== null && Number.isFinite(change)) {
        const up = change > 0;
        const goodWhenUp = k.better !== "down";
        const tone = change === 0 ? "flat" : up === goodWhenUp ? "good" : "bad";
        const p = el("p", "kpi-change " + tone);
        // The arrow is drawn for the eye; the hidden words say it to
        // screen readers, which would read the arrow as a shape's name.
        const arrow = el("span", "", change === 0 ? "■ " : up ? "▲ " : "▼ ");
        arrow.setAttribute("aria-hidden", "true");
        p.append(arrow, el("span", "visually-hidden", change === 0 ? "No change" : up ? "Up " : "Down "));
        if (change !== 0) p.append(number.format(Math.abs(change)) + "%");
        p.append(" ", el("span", "vs", "vs previous period"));
        card.append(p);
      }
      list.append(card);
    }
  }

  // ticks returns round values, about count steps apart, from at or below
  // lo to at or above hi.
  function ticks(lo, hi, count) {
    if (lo === hi) {
      const pad = Math.abs(lo) / 10 || 1;
      lo -= pad;
      hi += pad;
    }
    const raw = (hi - lo) / count;
    let step = Math.pow(10, Math.floor(Math.log10(raw)));
    const ratio = raw / step;
    if (ratio >= 7.5) step *= 10;
    else if (ratio >= 3.5) step *= 5;
    else if (ratio >= 1.5) step *= 2;
    const out = [];
    for (let i = Math.floor(lo / step); i <= Math.ceil(hi / step); i++) out.push(Number((i * step).toPrecision(12)));
    return out;
  }

  // renderChart draws the series as a line; label, when given, says what
  // it measures.
  function renderChart(series, label) {
    const box = byId("chart");
    box.textContent = "";
    byId("trend").hidden = series.length === 0;
    byId("chart-title").textContent = label;
    byId("chart-title").hidden = !label;
    label = label || "Trend";
    byId("data-caption").textContent = label + ", by date";
    if (series.length === 0) return;

    // The drawing is as wide as its box, so that text keeps its size on a
    // phone; it is drawn again when the window is resized.
    const W = Math.max(280, Math.round(box.clientWidth) || 960);
    const H = W < 600 ? 240 : 320;
    const m = { top: 16, right: 24, bottom: 36, left: 56 };
    // Not Math.min(...values): a long series would overflow the call stack.
    const min = series.reduce((a, p) => Math.min(a, p.value), Infinity);
    const max = series.reduce((a, p) => Math.max(a, p.value), -Infinity);
    const ys = ticks(min, max, 4);
    const lo = ys[0], hi = ys[ys.length - 1];
    const x = (i) => m.left + (series.length === 1 ? (W - m.left - m.right) / 2 : (i * (W - m.left - m.right)) / (series.length - 1));
    const y = (v) => H - m.bottom - ((v - lo) * (H - m.top - m.bottom)) / (hi - lo);

    const first = series[0], last = series[series.length - 1];
    const dateOpts = { day: "numeric", month: "short" };
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "chart-svg-title chart-svg-desc" });
    const title = svg("title", { id: "chart-svg-title" });
    title.textContent = label;
    const desc = svg("desc", { id: "chart-svg-desc" });
    desc.textContent = `${series.length} points from ${formatDate(first.date, dateOpts)} to ${formatDate(last.date, dateOpts)}: ` +
      `lowest ${number.format(min)}, highest ${number.format(max)}, latest ${number.format(last.value)}.`;
    chart.append(title, desc);

    for (const t of ys) {
      chart.append(svg("line", { class: t === lo ? "baseline" : "grid", x1: m.left, x2: W - m.right, y1: y(t), y2: y(t) }));
      const text = svg("text", { class: "tick", x: m.left - 10, y: y(t) + 4, "text-anchor": "end" });
      text.textContent = compact.format(t);
      chart.append(text);
    }

    // Dates under the axis, about 90 pixels apart at most six, evenly
    // spaced back from the latest, which is always labelled.
    const slots = Math.max(2, Math.min(6, Math.floor(W / 90)));
    const every = Math.max(1, Math.ceil((series.length - 1) / (slots - 1)));
    for (let i = series.length - 1; i >= 0; i -= every) {
      const anchor = series.length === 1 ? "middle" : i === 0 ? "start" : i === series.length - 1 ? "end" : "middle";
      const text = svg("text", { class: "tick", x: x(i), y: H - m.bottom + 22, "text-anchor": anchor });
      text.textContent = formatDate(series[i].date, dateOpts);
      chart.append(text);
    }

    const points = series.map((p, i) => `${x(i).toFixed(1)},${y(p.value).toFixed(1)}`);
    chart.append(svg("path", { class: "area", d: `M${x(0)},${y(lo)} L${points.join(" L")} L${x(series.length - 1)},${y(lo)} Z` }));
    chart.append(svg("polyline", { class: "line", points: points.join(" ") }));
    // A dot per point while they stay apart; past 60 only the latest.
    series.forEach((p, i) => {
      const isLast = i === series.length - 1;
      if (!isLast && series.length > 60) return;
      const dot = svg("circle", { class: isLast ? "point last" : "point", cx: x(i), cy: y(p.value), r: isLast ? 5 : 3.5 });
      const tip = svg("title");
      tip.textContent = `${formatDate(p.date, { dateStyle: "medium" })}: ${number.format(p.value)}`;
      dot.append(tip);
      chart.append(dot);
    });
    const lastLabel = svg("text", { class: "last-label", x: x(series.length - 1) - 8, y: y(last.value) - 12, "text-anchor": "end" });
    lastLabel.textContent = number.format(last.value);
    chart.append(lastLabel);
    box.append(chart);

    const rows = byId("data-rows");
    rows.textContent = "";
    for (const p of series) {
      const tr = el("tr");
      const th = el("th", "", formatDate(p.date, { dateStyle: "medium" }));
      th.scope = "row";
      tr.append(th, el("td", "", number.format(p.value)));
      rows.append(tr);
    }
  }

  // points keeps the series' points that can be drawn, oldest first.
  function points(series) {
    const out = (Array.isArray(series) ? series : [])
      .filter((p) => p && p.date !== undefined && p.value !== null && p.value !== "" && Number.isFinite(Number(p.value)))
      .map((p) => ({ date: p.date, value: Number(p.value), time: new Date(p.date).getTime() }));
    if (out.every((p) => !Number.isNaN(p.time))) out.sort((a, b) => a.time - b.time);
    return out;
  }

  // read fetches the dataset; null means there is none (404) or it is empty.
  async function read() {
    let res;
    try {
      res = await fetch(DATASET, { cache: "no-store", headers: { Accept: "application/json" } });
    } catch (e) {
      throw new Error("The dataset could not be reached. Check your connection and try again.");
    }
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`Reading the dataset failed (HTTP ${res.status}). Try again in a moment.`);
    const text = await res.text();
    if (text.trim() === "") return null;
    let data;
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw new Error("The dataset named metrics is not valid JSON. Replace it with a document shaped as shown in “How to feed this dashboard”.");
    }
    if (data === null || typeof data !== "object" || Array.isArray(data)) {
      throw new Error("The dataset named metrics is not a JSON object. Replace it with a document shaped as shown in “How to feed this dashboard”.");
    }
    return data;
  }

  async function load() {
    show("loading");
    try {
      const data = await read();
      const kpis = data && Array.isArray(data.kpis) ? data.kpis.filter((k) => k && typeof k === "object") : [];
      const series = points(data && data.series);
      if (kpis.length === 0 && series.length === 0) {
        show("empty");
        return;
      }
      // Shown before drawing, so that the chart can measure its box.
      show("figures");
      renderUpdated(data.updatedAt);
      renderKpis(kpis);
      drawn = { series, label: typeof data.seriesLabel === "string" ? data.seriesLabel : "" };
      renderChart(drawn.series, drawn.label);
    } catch (err) {
      byId("error-detail").textContent = err.message;
      show("error");
    }
  }

  // drawn is what the chart shows, to draw it again at a new width.
  let drawn = null;
  let resizing = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => drawn && renderChart(drawn.series, drawn.label), 150);
  });

  // The script is deferred, so the page's elements are all there by now.
  byId("retry").addEventListener("click", load);
  // A link to the instructions opens them, folded as they are by default.
  for (const a of document.querySelectorAll('a[href="#feed"]')) {
    a.addEventListener("click", () => { byId("feed").open = true; });
  }
  load();
})();
