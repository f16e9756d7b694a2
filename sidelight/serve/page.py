"""The lab page served at `/`: one self-contained HTML document (inline CSS and JS, no CDN, works offline).

Kept as a Python string so it ships inside the package with no package-data entry. `create_app` puts the
server's page token in place of `TOKEN_PLACEHOLDER` (a meta tag); the page sends it back as the
``X-Sidelight-Token`` header of every POST (the calls that store traces and feedback). The dial's
range and default are the serendipity lane's (`MAX_DIAL`, `DEFAULT_DIAL`), put in when this module loads.
"""

from .validate import DEFAULT_DIAL, MAX_DIAL

TOKEN_PLACEHOLDER = "__SIDELIGHT_PAGE_TOKEN__"

PAGE_HTML = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="sidelight-token" content="__SIDELIGHT_PAGE_TOKEN__">
<title>sidelight lab</title>
<style>
:root{--fg:#1a202c;--muted:#5a6678;--line:#d5dbe3;--bg:#f7f9fb;--card:#fff;--acc:#2b6cb0;--ok:#2f855a;--warn:#b7791f;--bad:#c53030}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;padding:.6rem 1rem;background:#1f2a37;color:#fff}
header h1{font-size:1.1rem;margin:0;font-weight:600}
.badge{display:inline-block;padding:.05rem .45rem;border-radius:.7rem;font-size:.78rem;background:#e2e8f0;color:#1a202c;margin-right:.25rem}
.badge.ok{background:#c6f6d5}.badge.warn{background:#fefcbf}.badge.bad{background:#fed7d7}.badge.off{background:#e2e8f0;color:#5a6678}
nav{display:flex;gap:.3rem;margin-left:auto}
nav button{background:transparent;color:#cbd5e0;border:1px solid #4a5568;border-radius:.3rem;padding:.2rem .6rem;cursor:pointer}
nav button[aria-selected=true]{background:#fff;color:#1f2a37}
main{padding:1rem;max-width:110rem;margin:0 auto}
form#search{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
#q{flex:1;min-width:18rem;font-size:1.05rem;padding:.45rem .6rem;border:1px solid var(--line);border-radius:.35rem}
#q:focus{outline:2px solid var(--acc)}
label.small{font-size:.85rem;color:var(--muted)}
input[type=number]{width:5.5rem;padding:.3rem}
button.primary{background:var(--acc);color:#fff;border:0;border-radius:.35rem;padding:.45rem .9rem;cursor:pointer}
.hint{color:var(--muted);font-size:.82rem;margin:.3rem 0 .6rem}
#labels{margin:.4rem 0;font-size:.88rem}
#lanes{display:grid;grid-template-columns:repeat(auto-fit,minmax(22rem,1fr));gap:.8rem}
.lane{background:var(--card);border:1px solid var(--line);border-radius:.45rem;padding:.5rem .7rem;min-width:0}
.lane h2{font-size:1rem;margin:.1rem 0 .2rem;display:flex;justify-content:space-between;gap:.5rem}
.lane .desc{font-size:.78rem;color:var(--muted);margin:0 0 .4rem}
.lane .trace{font:11px ui-monospace,monospace;color:var(--muted)}
ol.hits{list-style:none;margin:0;padding:0}
.hit{border-top:1px solid #edf1f5;padding:.35rem .3rem;display:grid;grid-template-columns:2rem 1fr auto;gap:.1rem .5rem;align-items:start}
.hit.sel{background:#ebf4ff;outline:2px solid #90cdf4;border-radius:.25rem}
.hit .rank{color:var(--muted);font-variant-numeric:tabular-nums;text-align:right}
.hit .title{font-weight:600;overflow-wrap:anywhere}
.hit .id{font:12px ui-monospace,monospace;color:var(--muted)}
.hit .score{font:12px ui-monospace,monospace;color:var(--muted);text-align:right}
.hit .agree{color:var(--ok);font-size:.75rem}
.hit .path{grid-column:2/4;font:12px ui-monospace,monospace;color:#2c5282;overflow-wrap:anywhere}
.hit .path .w{color:#805ad5}
button.credit{grid-column:3;font-size:.78rem;border:1px solid var(--line);background:#fff;border-radius:.3rem;cursor:pointer;padding:.1rem .45rem}
button.credit:hover{border-color:var(--acc)}
button.credit.done{background:#c6f6d5}
.missing{color:var(--warn);font-size:.85rem}
#feedback{margin:.2rem 0 .8rem;background:var(--card);border:1px solid var(--line);border-radius:.45rem;padding:.5rem .8rem}
#feedback:empty{display:none}
table{border-collapse:collapse;font-size:.88rem}
td,th{border:1px solid var(--line);padding:.2rem .5rem;text-align:left;vertical-align:top}
th{background:#edf2f7}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.changed td{background:#f0fff4}
.edge{font:12px ui-monospace,monospace}
section[hidden]{display:none}
#corpus .cols{display:flex;gap:2rem;flex-wrap:wrap;align-items:flex-start}
#report iframe{width:100%;height:75vh;border:1px solid var(--line);background:#fff}
#conn textarea{width:100%;min-height:4rem}
.err{color:var(--bad)}
kbd{font:11px ui-monospace,monospace;border:1px solid #a0aec0;border-bottom-width:2px;border-radius:3px;padding:0 .25rem;background:#fff}
</style>
</head>
<body>
<header>
  <h1>sidelight lab</h1>
  <span id="health" aria-live="polite"><span class="badge off">connecting…</span></span>
  <nav role="tablist">
    <button role="tab" data-tab="search" aria-selected="true">Search</button>
    <button role="tab" data-tab="corpus" aria-selected="false">Corpus</button>
    <button role="tab" data-tab="report" aria-selected="false">Lab report</button>
    <button role="tab" data-tab="log" aria-selected="false">Query log</button>
  </nav>
</header>
<main>
<section id="tab-search">
  <form id="search" autocomplete="off">
    <input id="q" name="q" type="search" placeholder="Search the index  (press / to focus)" aria-label="query">
    <label class="small">hits/lane <input id="limit" type="number" min="1" max="50" value="10"></label>
    <label class="small">budget ms <input id="budget" type="number" min="1" max="60000" value="5000"></label>
    <button class="primary" type="submit">Search</button>
  </form>
  <div class="hint"><kbd>/</kbd> search · <kbd>Enter</kbd> run · <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>f</kbd> credit the selected hit as used ·
    lanes are never fused: scores compare only within a lane; retrieval is not validation.</div>
  <div id="labels"></div>
  <div id="feedback" aria-live="polite"></div>
  <div id="lanes"></div>
</section>
<section id="tab-corpus" hidden><div id="corpus">loading…</div></section>
<section id="tab-report" hidden><div id="report">loading…</div></section>
<section id="tab-log" hidden><div id="log">loading…</div></section>
</main>
<script>
"use strict";
const $ = (s, el=document) => el.querySelector(s);
const $$ = (s, el=document) => Array.from(el.querySelectorAll(s));
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"}[c]));
const fmt = x => (typeof x === "number") ? (Math.abs(x) >= 100 ? x.toFixed(1) : x.toPrecision(4)) : esc(x);
let state = {result: null, sel: -1, edgesBefore: null};

const TOKEN = $('meta[name="sidelight-token"]').content;

async function api(path, body) {
  // GET reads; every POST (stores traces, feedback, verdicts) carries the page token and a JSON body
  const opt = body === undefined ? {} : {method: "POST", headers: {"content-type": "application/json", "x-sidelight-token": TOKEN}, body: JSON.stringify(body)};
  const r = await fetch(path, opt);
  const data = await r.json().catch(() => ({error: {message: "HTTP " + r.status}}));
  if (!r.ok) { const e = new Error((data.error && data.error.message) || ("HTTP " + r.status)); e.status = r.status; e.data = data; throw e; }
  return data;
}

async function health() {
  try {
    const h = await api("/health");
    const d = h.dense, c = h.certificate || {};
    const dcls = d.model_ready ? "ok" : (d.present ? (d.model_state === "failed" ? "bad" : "warn") : "off");
    const dtxt = d.present ? ("dense " + d.model_state) : "no dense vectors";
    $("#health").innerHTML =
      `<span class="badge ok" title="${esc(h.index.path)}">${esc(h.index.corpus)} · ${h.index.records.toLocaleString()} records · ${h.index.edges.toLocaleString()} edges</span>` +
      `<span class="badge ${dcls}" id="dense-badge">${esc(dtxt)}</span>` +
      `<span class="badge ${c.status === "pass" ? "ok" : (c.status === "fail" ? "bad" : "off")}" title="${esc(c.reason || "")}">certificate: ${esc(c.status)}</span>`;
    if (d.present && !d.model_ready && d.model_state !== "failed") setTimeout(health, 1000);
  } catch (e) { $("#health").innerHTML = `<span class="badge bad">server unreachable</span>`; setTimeout(health, 3000); }
}

function renderPath(path) {
  if (!path || !path.length) return "";
  let s = esc(path[0].source);
  for (const e of path) s += ` -[${esc(e.type)} <span class="w">${fmt(e.weight)}</span>]-&gt; ${esc(e.target)}`;
  return s;
}

function laneHtml(name, lane, desc, agree) {
  if (!lane) return "";
  const hits = lane.hits.map(h => `
    <li class="hit" data-channel="${esc(lane.channel)}" data-trace="${esc(lane.trace_id)}" data-node="${esc(h.id)}" tabindex="-1">
      <span class="rank">${h.rank}</span>
      <span><span class="title">${esc(h.title || h.id)}</span> <span class="id">${esc(h.id)}</span>
        ${agree.has(h.id) ? '<span class="agree" title="also in another lane">● agreement</span>' : ""}${h.is_seed ? ' <span class="agree" title="also a starting record">seed</span>' : ""}</span>
      <span class="score" title="score within this lane only">${fmt(h.score)}</span>
      ${lane.channel === "relation" ? `<span class="path">${renderPath(h.path)}</span>` : ""}
      <button class="credit" type="button" title="I used this record (sends trace id + node id)">✓ used</button>
    </li>`).join("");
  return `<div class="lane" data-channel="${esc(lane.channel)}">
    <h2><span>${esc(name)}</span><span class="trace" title="trace id: report it with the node id you used">${esc(lane.trace_id)}</span></h2>
    <p class="desc">${esc(desc || "")}</p>
    ${lane.hits.length ? `<ol class="hits">${hits}</ol>` : `<p class="missing">no ${esc(lane.channel)} hit</p>`}
  </div>`;
}

function connHtml() {
  return `<div class="lane" id="conn" data-channel="connections"><h2><span>connections</span></h2>
    <p class="desc">Write your answer first; the panel is revealed only after its SHA-256 is recorded.</p>
    <label class="small">dial <input id="dial" type="range" min="0" max="__MAX_DIAL__" value="__DEFAULT_DIAL__"> <span id="dialv">__DEFAULT_DIAL__</span></label>
    <button type="button" id="conn-run">fetch</button>
    <textarea id="answer" placeholder="your answer, before the reveal"></textarea>
    <button type="button" id="reveal">hash answer &amp; reveal</button><div id="conn-out"></div></div>`;
}

async function search(ev) {
  if (ev) ev.preventDefault();
  const q = $("#q").value.trim();
  if (!q) { $("#labels").innerHTML = `<span class="err">type a query first</span>`; return; }
  $("#labels").textContent = "searching…";
  $("#feedback").innerHTML = "";
  try {
    const r = await api("/api/channels", {query: q, limit: +$("#limit").value || 10, budget_ms: +$("#budget").value || 5000});
    state.result = r; state.sel = -1;
    const agree = new Set(r.agreement_node_ids);
    const labels = [];
    if (r.fallback) labels.push(`<span class="badge warn" id="fallback">fallback: ${esc(r.fallback)}</span>`);
    if (r.partial) labels.push(`<span class="badge warn" id="partial">partial</span>`);
    labels.push(...r.stages.map(s => `<span class="badge ${s.status === "done" ? "ok" : (s.status === "cut" ? "bad" : "off")}" title="${esc(s.reason || "")}">${esc(s.stage)} ${esc(s.status)}${s.ms !== undefined ? " " + s.ms.toFixed(1) + " ms" : ""}</span>`));
    labels.push(`<span class="small"> ${r.elapsed_ms.toFixed(1)} ms of ${r.budget_ms} ms</span>`);
    for (const m of r.missing_lanes) labels.push(`<span class="missing"> · ${esc(m.channel)} lane missing: ${esc(m.reason)}</span>`);
    $("#labels").innerHTML = labels.join(" ");
    const d = r.descriptions;
    // every lane of the answer, in its order (the lanes are the described keys holding hits or null)
    const names = Object.keys(d).filter(n => r[n] === null || (r[n] && Array.isArray(r[n].hits)));
    $("#lanes").innerHTML = names.map(n => r[n] ? laneHtml(n, r[n], d[n], agree)
      : `<div class="lane" data-channel="${esc(n)}"><h2>${esc(n)}</h2><p class="missing">skipped (see labels)</p></div>`).join("")
      + connHtml();
    wireConn();
    state.edgesBefore = await fetchEdges(allPathEdges());
  } catch (e) { $("#labels").innerHTML = `<span class="err">${esc(e.message)}</span>`; $("#lanes").innerHTML = ""; }
}

function allPathEdges() {
  const seen = new Map();
  const rel = state.result && state.result.relation;
  for (const h of (rel ? rel.hits : [])) for (const e of h.path) seen.set(`${e.source}\u0000${e.target}\u0000${e.type}`, {source: e.source, target: e.target, type: e.type});
  return Array.from(seen.values());
}
async function fetchEdges(keys) {
  if (!keys.length) return new Map();
  const r = await api("/api/edges", {edges: keys});
  return new Map(r.edges.map(e => [`${e.source}\u0000${e.target}\u0000${e.type}`, e]));
}

async function credit(li) {
  const trace = li.dataset.trace, node = li.dataset.node, channel = li.dataset.channel;
  const fb = $("#feedback");
  fb.innerHTML = `recording ${esc(node)}…`;
  try {
    const before = state.edgesBefore || await fetchEdges(allPathEdges());
    const r = await api("/api/feedback", {trace_id: trace, node_id: node});
    $("button.credit", li).classList.add("done");
    const after = await fetchEdges(allPathEdges());
    const credited = new Set(r.changed_edges.map(e => `${e.source}\u0000${e.target}\u0000${e.type}`));
    let rows = "", changedShown = 0, total = 0;
    for (const [k, a] of after) {
      const b = before.get(k) || a; total++;
      const changed = Math.abs((a.weight ?? 0) - (b.weight ?? 0)) > 1e-12;
      if (changed) changedShown++;
      if (changed || credited.has(k)) rows += `<tr class="changed edge-change" data-changed="${changed}"><td class="edge">${esc(a.source)} -[${esc(a.type)}]-&gt; ${esc(a.target)}</td><td class="n old">${fmt(b.weight)}</td><td class="n new">${fmt(a.weight)}</td><td>${credited.has(k) ? "credited" : "NOT credited"}</td></tr>`;
    }
    const unchanged = total - changedShown;
    fb.innerHTML = `<strong>${esc(r.note)}</strong><br>
      <span class="small">node <code>${esc(r.node_id)}</code> (rank ${r.rank}) from the ${esc(r.channel)} lane, trace <code>${esc(r.trace_id)}</code>${r.already_recorded ? " — already recorded before" : ""}</span>
      ${rows ? `<table id="edge-changes"><tr><th>credited edge</th><th>old weight</th><th>new weight</th><th></th></tr>${rows}</table>` : ""}
      <p class="small" id="unchanged-summary">${changedShown} of ${total} edge(s) on the relation paths shown changed; ${unchanged} unchanged (weights fetched from /api/edges before and after).</p>`;
    state.edgesBefore = after;
  } catch (e) { fb.innerHTML = `<span class="err">${esc(e.message)}</span>`; }
}

function wireConn() {
  const dial = $("#dial"); if (!dial) return;
  dial.oninput = () => { $("#dialv").textContent = dial.value; };
  $("#conn-run").onclick = async () => {
    try { state.conn = await api("/api/connections", {query: state.result.query, dial: +dial.value, budget_ms: +$("#budget").value || 5000});
      const c = state.conn.connections;
      if (!c) { $("#conn-out").innerHTML = `<p class="missing">connections cut by the time budget (partial)</p>`; return; }
      $("#conn-out").innerHTML = `<p class="small">floor: ${esc(c.floor_source)}${c.partial ? " (partial)" : ""} · ${c.seating.filled} of ${c.seating.offered} seat(s) filled, mixed in unlabeled · trace <code>${esc(c.trace_id)}</code></p>` +
        `<ol class="hits">${c.passages.map((p, i) => `<li class="hit" data-node="${esc(p.id)}"><span class="rank">${i + 1}</span><span><span class="title">${esc(p.title)}</span> <span class="id">${esc(p.id)}</span><br><span class="small">${esc(p.text.slice(0, 160))}</span></span></li>`).join("")}</ol>`; }
    catch (e) { $("#conn-out").innerHTML = `<span class="err">${esc(e.message)}</span>`; }
  };
  $("#reveal").onclick = async () => {
    try {
      const text = $("#answer").value; if (!text.trim()) throw new Error("write your answer first");
      const buf = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
      const hex = Array.from(new Uint8Array(buf)).map(b => b.toString(16).padStart(2, "0")).join("");
      const tid = state.conn && state.conn.connections && state.conn.connections.trace_id;
      if (!tid) throw new Error("fetch connections first");
      const r = await api("/api/reveal", {trace_id: tid, answer_sha256: hex});
      $("#conn-out").insertAdjacentHTML("afterbegin", `<p class="small">answer hash <code>${hex.slice(0, 16)}…</code> recorded; seated: ${esc(r.reveal.seated.map(x => x.id).join(", ") || "none")}</p><pre style="white-space:pre-wrap;font-size:.8rem">${esc(r.reveal.panel)}</pre>`);
    } catch (e) { $("#conn-out").innerHTML = `<span class="err">${esc(e.message)}</span>`; }
  };
}

function select(i) {
  const hits = $$("#lanes .hit");
  if (!hits.length) return;
  state.sel = Math.max(0, Math.min(hits.length - 1, i));
  hits.forEach((h, j) => h.classList.toggle("sel", j === state.sel));
  hits[state.sel].scrollIntoView({block: "nearest"});
}

async function corpus() {
  const el = $("#corpus");
  try {
    const s = await api("/api/stats");
    const rows = s.rows.map(([p, v]) => `<tr><td>${esc(p)}</td><td class="n">${esc(v)}</td></tr>`).join("");
    const types = Object.entries(s.edge_types).map(([t, n]) => `<tr><td>${esc(t)}</td><td class="n">${n.toLocaleString()}</td></tr>`).join("");
    el.innerHTML = `<h2>${esc(s.corpus)}</h2><div class="cols">
      <table id="stats-table"><tr><th>Property</th><th>Observed value</th></tr>${rows}</table>
      <figure><figcaption>Degree histogram (undirected, distinct neighbours; records per degree bin)</figcaption>${histogram(s.degree_histogram)}</figure>
      <table><tr><th>Edge type</th><th>Arcs</th></tr>${types}</table></div>`;
  } catch (e) { el.innerHTML = `<span class="err">${esc(e.message)}</span>`; }
}

function histogram(bins) {
  const W = 520, H = 240, L = 56, B = 40, T = 10, n = bins.length;
  const max = Math.max(1, ...bins.map(b => b.count));
  const bw = (W - L - 10) / n;
  const y = c => T + (H - T - B) * (1 - Math.log10(c + 1) / Math.log10(max + 1));
  let s = `<svg id="degree-svg" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="degree histogram">`;
  s += `<line x1="${L}" y1="${H - B}" x2="${W - 5}" y2="${H - B}" stroke="#4a5568"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#4a5568"/>`;
  for (const t of [1, 10, 100, 1000, 10000, 100000]) if (t <= max) s += `<text x="${L - 4}" y="${y(t) + 4}" font-size="10" text-anchor="end" fill="#4a5568">${t.toLocaleString()}</text><line x1="${L}" x2="${W - 5}" y1="${y(t)}" y2="${y(t)}" stroke="#edf2f7"/>`;
  bins.forEach((b, i) => {
    const x = L + i * bw + 2, yy = y(b.count);
    s += `<rect x="${x}" y="${yy}" width="${bw - 4}" height="${H - B - yy}" fill="#3182ce"><title>degree ${esc(b.label)}: ${b.count.toLocaleString()} records</title></rect>`;
    s += `<text x="${x + (bw - 4) / 2}" y="${H - B + 14}" font-size="10" text-anchor="middle" fill="#4a5568">${esc(b.label)}</text>`;
  });
  s += `<text x="${(W + L) / 2}" y="${H - 6}" font-size="11" text-anchor="middle" fill="#1a202c">degree</text>`;
  s += `<text x="12" y="${(H - B) / 2}" font-size="11" text-anchor="middle" fill="#1a202c" transform="rotate(-90 12 ${(H - B) / 2})">records (log)</text></svg>`;
  return s;
}

async function report() {
  const el = $("#report");
  try {
    const r = await api("/api/report");
    el.innerHTML = r.available ? `<p class="small">${esc(r.path)} · ${esc(r.modified)} · <a href="${esc(r.url)}" target="_blank">open</a></p><iframe src="${esc(r.url)}" title="lab report"></iframe>`
                               : `<p>No lab report: ${esc(r.reason)}</p>`;
  } catch (e) { el.innerHTML = `<span class="err">${esc(e.message)}</span>`; }
}

async function querylog() {
  const el = $("#log");
  try {
    const r = await api("/api/log?limit=100");
    el.innerHTML = `<p class="small">${r.total} call(s) logged (HTTP, MCP and CLI share this log)</p><table><tr><th>time</th><th>via</th><th>op</th><th>query / trace</th><th>lanes</th><th>ms</th><th>fallback</th><th>status</th></tr>` +
      r.entries.map(e => `<tr><td>${esc(e.created_at.slice(0, 19))}</td><td>${esc(e.interface)}</td><td>${esc(e.operation)}</td><td>${esc(e.query)}</td><td>${esc((e.lanes || []).map(l => l.channel).join(", "))}</td><td class="n">${e.total_ms == null ? "" : e.total_ms.toFixed(1)}</td><td>${esc(e.fallback || "")}${e.partial ? " partial" : ""}</td><td>${e.status}${e.error ? ` <span class="err">${esc(e.error)}</span>` : ""}</td></tr>`).join("") + `</table>`;
  } catch (e) { el.innerHTML = `<span class="err">${esc(e.message)}</span>`; }
}

function tab(name) {
  $$("nav button").forEach(b => b.setAttribute("aria-selected", String(b.dataset.tab === name)));
  $$("main > section").forEach(s => { s.hidden = s.id !== "tab-" + name; });
  if (name === "corpus") corpus(); else if (name === "report") report(); else if (name === "log") querylog();
}

document.addEventListener("DOMContentLoaded", () => {
  $("#search").addEventListener("submit", search);
  $$("nav button").forEach(b => b.addEventListener("click", () => tab(b.dataset.tab)));
  $("#lanes").addEventListener("click", ev => { const b = ev.target.closest("button.credit"); if (b) credit(b.closest(".hit")); });
  document.addEventListener("keydown", ev => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    if (ev.key === "/" && !typing) { ev.preventDefault(); tab("search"); $("#q").focus(); $("#q").select(); return; }
    if (ev.key === "Escape") { document.activeElement.blur(); return; }
    if (typing) return;
    if (ev.key === "j") select(state.sel + 1);
    else if (ev.key === "k") select(state.sel - 1);
    else if (ev.key === "f" && state.sel >= 0) credit($$("#lanes .hit")[state.sel]);
  });
  health();
  const q = new URLSearchParams(location.search).get("q");  // prefilled only: opening a link stores nothing
  if (q) $("#q").value = q;
  $("#q").focus();
});
</script>
</body>
</html>
"""
PAGE_HTML = PAGE_HTML.replace("__MAX_DIAL__", str(MAX_DIAL)).replace("__DEFAULT_DIAL__", str(DEFAULT_DIAL))
