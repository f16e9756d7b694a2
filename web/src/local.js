// The page opened from an export (`sidelight export-web`): decodes the data scripts, starts the search
// worker and shows the lanes it computes in the browser. Opened from `sidelight serve --site`, it also
// shows the lanes only the server runs and credits hits through the server's traces.
// `window.sidelight` (ready, search, encode, timings) is what tests and bench/web.py drive.

import { esc, hitHtml, laneHtml } from "./view.js";

const $ = (s) => document.querySelector(s);
const LANES = { bm25: "lexical", dense: "dense", relation: "relation" };
let M, DESC, tables, STOP;

function bytes(b64) {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64);
  const s = atob(b64), out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

const timings = {};
let payload;

let worker = null, pending = new Map(), nextId = 1, readyIndex, readyModel;
let server = null;  // set when `sidelight serve INDEX --site SITE` serves this page: {header, token}

/** Opened from `sidelight serve` for this index? Then feedback goes through the server's traces. */
async function detectServer() {
  if (!location.protocol.startsWith("http")) return;
  try {
    const h = await (await fetch("../health")).json();
    if (!h.index || h.index.corpus !== M.corpus || h.index.records !== M.records) return;
    server = await (await fetch("../api/token")).json();
    $("#status-server").hidden = false;
    $("#needs-server").innerHTML = 'Served by <code>sidelight serve</code>: credit a relation hit to strengthen the edges its trace credited; the serendipity lane and its reveal are on <a href="../">the served lab page</a>.';
  } catch (err) { server = null; }
}

async function post(path, body) {
  const r = await fetch(".." + path, { method: "POST", body: JSON.stringify(body),
                                        headers: { "content-type": "application/json", [server.header]: server.token } });
  const j = await r.json();
  if (!r.ok) throw new Error((j.error && j.error.message) || `${path}: HTTP ${r.status}`);
  return j;
}

function start() {
  worker = new Worker(URL.createObjectURL(new Blob([window.SIDELIGHT_WORKER_SRC], { type: "text/javascript" })));
  let doneIndex, failIndex, doneModel, failModel = () => {};
  readyIndex = new Promise((res, rej) => { doneIndex = res; failIndex = rej; });
  readyModel = M.dense ? new Promise((res, rej) => { doneModel = res; failModel = rej; }) : Promise.resolve(0);
  readyModel.catch(() => {});  // a failed model set-up is shown in the status badge and by each dense search
  worker.onmessage = ({ data }) => {
    if (data.type === "ready") {
      timings[`${data.part}_setup_ms`] = data.ms;
      (data.part === "index" ? doneIndex : doneModel)(data.ms);
      status();
      return;
    }
    const p = pending.get(data.id);
    if (!p) {  // an error outside a request: the set-up failed
      if (data.type === "error") {
        failIndex(new Error(data.message));
        failModel(new Error(data.message));
        $("#status").textContent = `set-up failed: ${data.message}`;
        $("#status").className = "badge bad";
      }
      return;
    }
    pending.delete(data.id);
    data.type === "error" ? p.reject(new Error(data.message)) : p.resolve(data);
  };
  const msg = { type: "init", manifest: M, index: payload.index, tables: payload.tables };
  if (M.dense) Object.assign(msg, { model: payload.model, tokenizer: payload.tokenizer, wasm: payload["ort-wasm"] });
  worker.postMessage(msg);  // copied, not transferred: Stop restarts the worker from the same buffers
}

function ask(msg) {
  const id = nextId++;
  return new Promise((resolve, reject) => { pending.set(id, { resolve, reject }); worker.postMessage({ ...msg, id }); });
}

function stop() {
  worker.terminate();
  for (const p of pending.values()) p.reject(new Error("stopped"));
  pending.clear();
  start();
  $("#timings").textContent = "stopped; the worker restarted";
}

function status() {
  const parts = [`${M.records.toLocaleString()} records`, `${M.edges.toLocaleString()} edges`];
  const model = M.dense ? (timings.model_setup_ms ? "model ready" : "model loading…") : "no vectors";
  $("#status").textContent = `${parts.join(" · ")} · ${model}`;
  $("#status").className = "badge ok";
}

function trace() {
  const r = crypto.getRandomValues(new Uint8Array(6));
  return "local-" + Array.from(r, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The query's terms as the index tokenizes them (lowercase ASCII alphanumeric runs, min length, stop list). */
const terms = (text) => (String(text).toLowerCase().match(/[a-z0-9]+/g) || [])
  .filter((t) => t.length >= M.tokenizer.min_length && !STOP.has(t));

/** The record's sentence with most query terms (≤ 240 chars), as escaped text with those terms in <mark>. */
function snippetHtml(pos, qterms) {
  const text = String(tables.texts[pos] || "").replace(/[#*_`>\[\]]+/g, " ").replace(/\s+/g, " ").trim();
  const sentences = (text.match(/[^.!?]+[.!?]*/g) || [text]).slice(0, 200);
  let best = sentences[0] || "", most = -1;
  for (const s of sentences) {
    const n = terms(s).filter((t) => qterms.has(t)).length;
    if (n > most) { best = s; most = n; }
  }
  best = best.trim();
  if (best.length > 240) best = best.slice(0, 240) + "…";
  let out = "", last = 0;
  for (const m of best.matchAll(/[A-Za-z0-9]+/g)) {
    if (!qterms.has(m[0].toLowerCase())) continue;
    out += esc(best.slice(last, m.index)) + `<mark>${esc(m[0])}</mark>`;
    last = m.index + m[0].length;
  }
  return out + esc(best.slice(last));
}

/** Where a hit's title links: the export's --link-template, else the file's path (relative to the page). */
function hrefOf(pos) {
  const path = (tables.paths && tables.paths[pos]) || tables.ids[pos], anchor = (tables.anchors && tables.anchors[pos]) || "";
  if (M.link_template) {
    return M.link_template.replaceAll("{path}", encodeURIComponent(path)).replaceAll("{anchor}", encodeURIComponent(anchor));
  }
  return path.split("/").map(encodeURIComponent).join("/");
}

let QTERMS = new Set();

/** A hit at position `pos` as view.js draws it; `h` (a relation hit) may carry its edge path. */
function hit(h, rank, pos, score, credit) {
  const path = h && h.path ? h.path.map((e) => `${esc(tables.titles[e.source])} —${esc(e.type)}→ ${esc(tables.titles[e.target])}`).join(" · ") : "";
  return { rank, id: tables.ids[pos], title: tables.titles[pos], href: hrefOf(pos), score, credit,
           textHtml: snippetHtml(pos, QTERMS), pathHtml: path };
}

function anchorsHtml(r) {
  if (!r.anchors || !r.anchors.length) return "";
  const seeds = r.anchors.map((a) => `${esc(tables.titles[a.position])} (${esc(a.why)}${a.cue ? `, “${esc(a.cue)}”` : ""})`);
  return `<p class="desc">from ${seeds.join(", ")}${r.cue ? ` · cue “${esc(r.cue.phrase)}” → ${esc(r.cue.types.join(", ") || "all types")}` : ""}</p>`;
}

/** A lane the server answered that this page does not compute (a lane registered on the server): its hits as served. */
function servedLane(name, lane, description) {
  const hits = lane.hits.map((h) => [h, tables.ids.indexOf(h.id)]).filter(([, pos]) => pos >= 0)
    .map(([h, pos]) => hit(null, h.rank, pos, h.score, lane.trace_id));  // a served path names ids, not positions
  return laneHtml({ method: name, channel: name, label: name, detail: "served", description, hits,
                    trace: `trace id ${lane.trace_id} (stored by the server)` });
}

function render(result, methods, served) {
  const local = new Set(Object.values(LANES));
  const extra = served && methods.length > 1 ? Object.keys(served.descriptions || {})
    .filter((n) => !local.has(n) && served[n] && Array.isArray(served[n].hits)) : [];
  $("#lanes").innerHTML = renderLocal(result, methods, served)
    + extra.map((n) => servedLane(n, served[n], served.descriptions[n])).join("");
}

function renderLocal(result, methods, served) {
  return methods.map((m) => {
    const r = result.lanes[m], lane = served && LANES[m] ? served[LANES[m]] : null;
    const credited = m === "relation" && lane ? new Set(lane.hits.map((h) => h.id)) : new Set();
    const hits = r.positions.map((p, i) => hit(r.hits && r.hits[i], i + 1, p, r.scores[i],
                                               credited.has(tables.ids[p]) ? lane.trace_id : null));
    return laneHtml({ method: m, channel: LANES[m] || m, label: LANES[m] || m, detail: `${m} · ${result.timings[m].toFixed(1)} ms`,
                      description: DESC[m], extraHtml: m === "relation" ? anchorsHtml(r) : "", hits,
                      empty: m === "relation" ? "no record reached through an edge" : "no hit",
                      trace: lane ? `trace id ${lane.trace_id} (stored by the server)` : `trace id ${trace()} (kept on this device only)` });
  }).join("");
}

async function onCredit(ev) {
  const b = ev.target.closest("button.credit");
  if (!b) return;
  const li = b.closest(".hit");
  try {
    const r = await post("/api/feedback", { trace_id: li.dataset.trace, node_id: li.dataset.node });
    b.textContent = "credited";
    b.disabled = true;
    $("#timings").textContent = r.note || "credited";
  } catch (err) {
    $("#timings").innerHTML = `<span class="err">${esc(err.message)}</span>`;
  }
}

async function search(query, methods, k, qvec = null) {
  await readyIndex;
  return ask({ type: "search", query, methods, k, qvec });
}

async function onSearch(ev) {
  ev.preventDefault();
  const query = $("#q").value, k = Number($("#k").value) || 10;
  const lanes = ["bm25", ...(M.dense ? ["dense"] : []), "relation", $("#extra").value];
  const methods = ($("#sides").checked ? lanes : [M.default_method || "bm25"]).filter((m, i, a) => m && a.indexOf(m) === i);
  QTERMS = new Set(terms(query));
  $("#lanes").className = methods.length > 1 ? "side" : "one";
  $("#stop").disabled = false;
  $("#timings").textContent = "searching…";
  try {
    const t = performance.now();
    const served = server ? post("/api/channels", { query, limit: k }).catch(() => null) : null;  // local lanes stand alone
    const r = await search(query, methods, k);
    render(r, methods, served ? await served : null);
    const q = Object.entries(r.timings).map(([m, ms]) => `${m} ${ms.toFixed(1)} ms`).join(" · ");
    $("#timings").textContent = `query ${(performance.now() - t).toFixed(1)} ms (${q}) · page load: download ${timings.download_ms.toFixed(0)} ms, decode ${timings.decode_ms.toFixed(0)} ms, index set-up ${timings.index_setup_ms.toFixed(0)} ms` + (M.dense ? `, model set-up ${timings.model_setup_ms ? timings.model_setup_ms.toFixed(0) + " ms" : "running"}` : "");
  } catch (err) {
    $("#timings").innerHTML = `<span class="err">${esc(err.message)}</span>`;
  } finally {
    $("#stop").disabled = true;
  }
}

/** Start the exported page: decode the data scripts, start the worker, and wait for the index. */
export function startLocal(manifest) {
  M = manifest;
  // Descriptions are written once, in the lane registry and the method declarations (the manifest carries them).
  const laneDesc = Object.fromEntries((M.lanes || []).map((l) => [l.name, l.description]));
  DESC = Object.fromEntries([...Object.entries(M.method_descriptions || {}),
                             ...Object.entries(LANES).filter(([, l]) => laneDesc[l]).map(([m, l]) => [m, laneDesc[l]])]);
  timings.download_ms = performance.now() - window.SIDELIGHT_T0;
  const t0 = performance.now();
  payload = Object.fromEntries(Object.entries(window.SIDELIGHT_DATA).map(([k, v]) => [k, typeof v === "string" ? bytes(v).buffer : v]));
  timings.decode_ms = performance.now() - t0;
  tables = payload.tables;
  STOP = new Set(M.tokenizer.stopwords);
  if (M.lab_report) $("#lab").hidden = false;
  $("#extra").innerHTML = M.methods_offered.filter((m) => !LANES[m]).map((m) => `<option>${esc(m)}</option>`).join("");
  $("#search").addEventListener("submit", onSearch);
  $("#stop").addEventListener("click", stop);
  $("#lanes").addEventListener("click", onCredit);
  detectServer();
  start();
  readyIndex.then(() => {
    $("#q").disabled = $("#go").disabled = false;
    $("#q").focus();
    const q = new URLSearchParams(location.search).get("q");  // ?q=… opens a search on load
    if (q) { $("#q").value = q; onSearch({ preventDefault() {} }); }
  });
  window.sidelight = {
    manifest: M, timings, ready: () => readyIndex, modelReady: () => readyModel, search,
    encode: async (texts) => { await readyModel; return (await ask({ type: "encode", texts })).vectors; },
    ids: tables.ids,
  };
}
