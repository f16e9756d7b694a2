// The page as `sidelight serve` serves it at `/` (the lab view): the server runs every registered lane
// (`/api/channels`), stores their traces and takes feedback; tabs show the corpus, the lab report and
// the query log. No data is exported: the manifest names the corpus, its lanes and the dial's range.

import { esc, fmt, laneHtml } from "./view.js";

const $ = (s, el = document) => el.querySelector(s);
const $$ = (s, el = document) => Array.from(el.querySelectorAll(s));
const state = { result: null, sel: -1, edgesBefore: null, conn: null };
let TOKEN = "";

async function api(path, body) {
  // GET reads; every POST (stores traces, feedback, verdicts) carries the page token and a JSON body
  const opt = body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json", "x-sidelight-token": TOKEN }, body: JSON.stringify(body) };
  const r = await fetch(path, opt);
  const data = await r.json().catch(() => ({ error: { message: "HTTP " + r.status } }));
  if (!r.ok) throw new Error((data.error && data.error.message) || "HTTP " + r.status);
  return data;
}

async function health() {
  try {
    const h = await api("health");
    const d = h.dense, c = h.certificate || {};
    const dcls = d.model_ready ? "ok" : (d.present ? (d.model_state === "failed" ? "bad" : "warn") : "off");
    const dtxt = d.present ? "dense " + d.model_state : "no dense vectors";
    $("#status").className = "badge ok";
    $("#status").textContent = `${h.index.records.toLocaleString()} records · ${h.index.edges.toLocaleString()} edges`;
    $("#health").innerHTML = `<span class="badge ${dcls}" id="dense-badge">${esc(dtxt)}</span>` +
      `<span class="badge ${c.status === "pass" ? "ok" : (c.status === "fail" ? "bad" : "off")}" title="${esc(c.reason || "")}">certificate: ${esc(c.status)}</span>`;
    if (d.present && !d.model_ready && d.model_state !== "failed") setTimeout(health, 1000);
  } catch (e) { $("#status").className = "badge bad"; $("#status").textContent = "server unreachable"; setTimeout(health, 3000); }
}

function renderPath(path) {
  if (!path || !path.length) return "";
  let s = esc(path[0].source);
  for (const e of path) s += ` -[${esc(e.type)} <span class="w">${fmt(e.weight)}</span>]-&gt; ${esc(e.target)}`;
  return s;
}

function lane(name, r, desc, agree) {
  if (!r) return laneHtml({ method: name, channel: name, label: name, description: desc, trace: "", hits: [], empty: "skipped (see labels)" });
  const hits = r.hits.map((h) => ({
    rank: h.rank, id: h.id, title: h.title, score: h.score, credit: r.trace_id, pathHtml: renderPath(h.path),
    note: (agree.has(h.id) ? ' <span class="agree" title="also in another lane">● agreement</span>' : "") +
          (h.is_seed ? ' <span class="agree" title="also a starting record">seed</span>' : ""),
  }));
  return laneHtml({ method: name, channel: r.channel, label: name, detail: "served", description: desc, hits,
                    trace: `trace id ${r.trace_id} (stored by the server)`, empty: `no ${r.channel} hit` });
}

function connHtml(m) {
  return `<section class="lane" id="conn" data-method="connections" data-channel="connections"><h2><span>connections</span></h2>
    <p class="desc">Write your answer first; the panel is revealed only after its SHA-256 is recorded.</p>
    <label class="small">dial <input id="dial" type="range" min="0" max="${m.max_dial}" value="${m.default_dial}"> <span id="dialv">${m.default_dial}</span></label>
    <button type="button" id="conn-run">fetch</button>
    <textarea id="answer" placeholder="your answer, before the reveal"></textarea>
    <button type="button" id="reveal">hash answer &amp; reveal</button><div id="conn-out"></div></section>`;
}

async function search(ev, m) {
  if (ev) ev.preventDefault();
  const q = $("#q").value.trim();
  if (!q) { $("#timings").innerHTML = '<span class="err">type a query first</span>'; return; }
  $("#timings").textContent = "searching…";
  $("#feedback").innerHTML = "";
  try {
    const r = await api("api/channels", { query: q, limit: Number($("#k").value) || 10, budget_ms: Number($("#budget").value) || 5000 });
    state.result = r; state.sel = -1;
    const agree = new Set(r.agreement_node_ids);
    const labels = [];
    if (r.fallback) labels.push(`<span class="badge warn" id="fallback">fallback: ${esc(r.fallback)}</span>`);
    if (r.partial) labels.push('<span class="badge warn" id="partial">partial</span>');
    labels.push(...r.stages.map((s) => `<span class="badge ${s.status === "done" ? "ok" : (s.status === "cut" ? "bad" : "off")}" title="${esc(s.reason || "")}">${esc(s.stage)} ${esc(s.status)}${s.ms !== undefined ? " " + s.ms.toFixed(1) + " ms" : ""}</span>`));
    labels.push(`<span class="small"> query ${r.elapsed_ms.toFixed(1)} ms of ${r.budget_ms} ms</span>`);
    for (const x of r.missing_lanes) labels.push(`<span class="missing"> · ${esc(x.channel)} lane missing: ${esc(x.reason)}</span>`);
    $("#timings").innerHTML = labels.join(" ");
    const d = r.descriptions;
    // every lane of the answer, in its order (the lanes are the described keys holding hits or null)
    const names = Object.keys(d).filter((n) => r[n] === null || (r[n] && Array.isArray(r[n].hits)));
    $("#lanes").className = "side";
    $("#lanes").innerHTML = names.map((n) => lane(n, r[n], d[n], agree)).join("") + connHtml(m);
    wireConn();
    state.edgesBefore = await fetchEdges(allPathEdges());
  } catch (e) { $("#timings").innerHTML = `<span class="err">${esc(e.message)}</span>`; $("#lanes").innerHTML = ""; }
}

const edgeKey = (e) => `${e.source}\u0000${e.target}\u0000${e.type}`;

function allPathEdges() {
  const seen = new Map(), rel = state.result && state.result.relation;
  for (const h of (rel ? rel.hits : [])) for (const e of h.path || []) seen.set(edgeKey(e), { source: e.source, target: e.target, type: e.type });
  return Array.from(seen.values());
}

async function fetchEdges(keys) {
  if (!keys.length) return new Map();
  const r = await api("api/edges", { edges: keys });
  return new Map(r.edges.map((e) => [edgeKey(e), e]));
}

async function credit(li) {
  const fb = $("#feedback");
  fb.innerHTML = `recording ${esc(li.dataset.node)}…`;
  try {
    const before = state.edgesBefore || await fetchEdges(allPathEdges());
    const r = await api("api/feedback", { trace_id: li.dataset.trace, node_id: li.dataset.node });
    const b = $("button.credit", li);
    b.textContent = "credited"; b.classList.add("done");
    const after = await fetchEdges(allPathEdges());
    const credited = new Set(r.changed_edges.map(edgeKey));
    let rows = "", changedShown = 0, total = 0;
    for (const [k, a] of after) {
      const was = before.get(k) || a; total++;
      const changed = Math.abs((a.weight ?? 0) - (was.weight ?? 0)) > 1e-12;
      if (changed) changedShown++;
      if (changed || credited.has(k)) rows += `<tr class="changed edge-change" data-changed="${changed}"><td class="edge">${esc(a.source)} -[${esc(a.type)}]-&gt; ${esc(a.target)}</td><td class="n old">${fmt(was.weight)}</td><td class="n new">${fmt(a.weight)}</td><td>${credited.has(k) ? "credited" : "NOT credited"}</td></tr>`;
    }
    fb.innerHTML = `<strong>${esc(r.note)}</strong><br>
      <span class="small">node <code>${esc(r.node_id)}</code> (rank ${r.rank}) from the ${esc(r.channel)} lane, trace <code>${esc(r.trace_id)}</code>${r.already_recorded ? " — already recorded before" : ""}</span>
      ${rows ? `<table id="edge-changes"><tr><th>credited edge</th><th>old weight</th><th>new weight</th><th></th></tr>${rows}</table>` : ""}
      <p class="small" id="unchanged-summary">${changedShown} of ${total} edge(s) on the relation paths shown changed; ${total - changedShown} unchanged (weights fetched from /api/edges before and after).</p>`;
    state.edgesBefore = after;
  } catch (e) { fb.innerHTML = `<span class="err">${esc(e.message)}</span>`; }
}

function wireConn() {
  const dial = $("#dial");
  if (!dial) return;
  dial.oninput = () => { $("#dialv").textContent = dial.value; };
  $("#conn-run").onclick = async () => {
    try {
      state.conn = await api("api/connections", { query: state.result.query, dial: Number(dial.value), budget_ms: Number($("#budget").value) || 5000 });
      const c = state.conn.connections;
      if (!c) { $("#conn-out").innerHTML = '<p class="missing">connections cut by the time budget (partial)</p>'; return; }
      $("#conn-out").innerHTML = `<p class="small">floor: ${esc(c.floor_source)}${c.partial ? " (partial)" : ""} · ${c.seating.filled} of ${c.seating.offered} seat(s) filled, mixed in unlabeled · trace <code>${esc(c.trace_id)}</code></p>` +
        `<ol class="hits">${c.passages.map((p, i) => `<li class="hit" data-node="${esc(p.id)}"><span class="rank">${i + 1}</span><span><span class="title">${esc(p.title)}</span> <span class="id">${esc(p.id)}</span><br><span class="small">${esc(p.text.slice(0, 160))}</span></span></li>`).join("")}</ol>`;
    } catch (e) { $("#conn-out").innerHTML = `<span class="err">${esc(e.message)}</span>`; }
  };
  $("#reveal").onclick = async () => {
    try {
      const text = $("#answer").value;
      if (!text.trim()) throw new Error("write your answer first");
      const buf = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
      const hex = Array.from(new Uint8Array(buf)).map((b) => b.toString(16).padStart(2, "0")).join("");
      const tid = state.conn && state.conn.connections && state.conn.connections.trace_id;
      if (!tid) throw new Error("fetch connections first");
      const r = await api("api/reveal", { trace_id: tid, answer_sha256: hex });
      $("#conn-out").insertAdjacentHTML("afterbegin", `<p class="small">answer hash <code>${hex.slice(0, 16)}…</code> recorded; seated: ${esc(r.reveal.seated.map((x) => x.id).join(", ") || "none")}</p><pre style="white-space:pre-wrap;font-size:.8rem">${esc(r.reveal.panel)}</pre>`);
    } catch (e) { $("#conn-out").innerHTML = `<span class="err">${esc(e.message)}</span>`; }
  };
}

function select(i) {
  const hits = $$("#lanes .hit");
  if (!hits.length) return;
  state.sel = Math.max(0, Math.min(hits.length - 1, i));
  hits.forEach((h, j) => h.classList.toggle("sel", j === state.sel));
  hits[state.sel].scrollIntoView({ block: "nearest" });
}

function histogram(bins) {
  const W = 520, H = 240, L = 56, B = 40, T = 10, n = bins.length;
  const max = Math.max(1, ...bins.map((b) => b.count)), bw = (W - L - 10) / n;
  const y = (c) => T + (H - T - B) * (1 - Math.log10(c + 1) / Math.log10(max + 1));
  let s = `<svg id="degree-svg" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="degree histogram">`;
  s += `<line x1="${L}" y1="${H - B}" x2="${W - 5}" y2="${H - B}" stroke="#4a5568"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#4a5568"/>`;
  for (const t of [1, 10, 100, 1000, 10000, 100000]) if (t <= max) s += `<text x="${L - 4}" y="${y(t) + 4}" font-size="10" text-anchor="end" fill="#4a5568">${t.toLocaleString()}</text><line x1="${L}" x2="${W - 5}" y1="${y(t)}" y2="${y(t)}" stroke="#edf2f7"/>`;
  bins.forEach((b, i) => {
    const x = L + i * bw + 2, yy = y(b.count);
    s += `<rect x="${x}" y="${yy}" width="${bw - 4}" height="${H - B - yy}" fill="#3182ce"><title>degree ${esc(b.label)}: ${b.count.toLocaleString()} records</title></rect>`;
    s += `<text x="${x + (bw - 4) / 2}" y="${H - B + 14}" font-size="10" text-anchor="middle" fill="#4a5568">${esc(b.label)}</text>`;
  });
  s += `<text x="${(W + L) / 2}" y="${H - 6}" font-size="11" text-anchor="middle" fill="#1a202c">degree</text>`;
  return s + `<text x="12" y="${(H - B) / 2}" font-size="11" text-anchor="middle" fill="#1a202c" transform="rotate(-90 12 ${(H - B) / 2})">records (log)</text></svg>`;
}

async function corpus(el) {
  const s = await api("api/stats");
  const rows = s.rows.map(([p, v]) => `<tr><td>${esc(p)}</td><td class="n">${esc(v)}</td></tr>`).join("");
  const types = Object.entries(s.edge_types).map(([t, n]) => `<tr><td>${esc(t)}</td><td class="n">${n.toLocaleString()}</td></tr>`).join("");
  el.innerHTML = `<h2>${esc(s.corpus)}</h2><div class="cols"><table id="stats-table"><tr><th>Property</th><th>Observed value</th></tr>${rows}</table>
    <figure><figcaption>Degree histogram (undirected, distinct neighbours; records per degree bin)</figcaption>${histogram(s.degree_histogram)}</figure>
    <table><tr><th>Edge type</th><th>Arcs</th></tr>${types}</table></div>`;
}

async function report(el) {
  const r = await api("api/report");
  el.innerHTML = r.available ? `<p class="small">${esc(r.path)} · ${esc(r.modified)} · <a href="${esc(r.url.replace(/^\//, ""))}" target="_blank">open</a></p><iframe src="${esc(r.url.replace(/^\//, ""))}" title="lab report"></iframe>`
    : `<p>No lab report: ${esc(r.reason)}</p>`;
}

async function querylog(el) {
  const r = await api("api/log?limit=100");
  el.innerHTML = `<p class="small">${r.total} call(s) logged (HTTP, MCP and CLI share this log)</p><table><tr><th>time</th><th>via</th><th>op</th><th>query / trace</th><th>lanes</th><th>ms</th><th>fallback</th><th>status</th></tr>` +
    r.entries.map((e) => `<tr><td>${esc(e.created_at.slice(0, 19))}</td><td>${esc(e.interface)}</td><td>${esc(e.operation)}</td><td>${esc(e.query)}</td><td>${esc((e.lanes || []).map((l) => l.channel).join(", "))}</td><td class="n">${e.total_ms == null ? "" : e.total_ms.toFixed(1)}</td><td>${esc(e.fallback || "")}${e.partial ? " partial" : ""}</td><td>${e.status}${e.error ? ` <span class="err">${esc(e.error)}</span>` : ""}</td></tr>`).join("") + "</table>";
}

const TABS = { corpus, report, log: querylog };

function tab(name) {
  $$("nav button").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.tab === name)));
  $$("main > .tab").forEach((s) => { s.hidden = s.id !== "tab-" + name; });
  const el = $(`#tab-${name} .view`);
  if (TABS[name]) TABS[name](el).catch((e) => { el.innerHTML = `<span class="err">${esc(e.message)}</span>`; });
}

/** Start the served page: the manifest `m` names the corpus, the lanes and the dial's range. */
export function startServed(m) {
  TOKEN = $('meta[name="sidelight-token"]').content;
  for (const el of $$(".served")) el.hidden = false;
  for (const el of $$(".exported")) el.hidden = true;
  $("#search").addEventListener("submit", (ev) => search(ev, m));
  $$("nav button").forEach((b) => b.addEventListener("click", () => tab(b.dataset.tab)));
  $("#lanes").addEventListener("click", (ev) => { const b = ev.target.closest("button.credit"); if (b) credit(b.closest(".hit")); });
  document.addEventListener("keydown", (ev) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    if (ev.key === "/" && !typing) { ev.preventDefault(); tab("search"); $("#q").focus(); $("#q").select(); return; }
    if (ev.key === "Escape") { document.activeElement.blur(); return; }
    if (typing) return;
    if (ev.key === "j") select(state.sel + 1);
    else if (ev.key === "k") select(state.sel - 1);
    else if (ev.key === "f" && state.sel >= 0) credit($$("#lanes .hit")[state.sel]);
  });
  health();
  $("#q").disabled = $("#go").disabled = false;
  const q = new URLSearchParams(location.search).get("q");  // prefilled only: opening a link stores nothing
  if (q) $("#q").value = q;
  $("#q").focus();
}
