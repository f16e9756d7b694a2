// What both ways of opening the page draw alike: a lane (a section with its description and trace id) and
// its hits. The page searching in the browser and the page served by `sidelight serve` both call these.

export const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
export const fmt = (x) => (typeof x === "number" ? (Math.abs(x) >= 100 ? x.toFixed(1) : x.toPrecision(4)) : esc(x));

/** One hit: {rank, id, title, href?, score, credit?: trace id, note?, textHtml?, pathHtml?} (the *Html fields are escaped already). */
export function hitHtml(h) {
  const title = h.href ? `<a class="title" href="${esc(h.href)}">${esc(h.title || h.id)}</a>` : `<span class="title">${esc(h.title || h.id)}</span>`;
  const button = h.credit ? `<button class="credit" type="button" title="I used this record (sends trace id + node id)">credit</button>` : "";
  return `<li class="hit"${h.credit ? ` data-trace="${esc(h.credit)}"` : ""} data-node="${esc(h.id)}" tabindex="-1"><span class="rank">${h.rank}</span>
    <span>${title} <span class="id">${esc(h.id)}</span>${h.note || ""}</span><span class="score" title="score within this lane only">${fmt(h.score)}${button}</span>
    ${h.textHtml ? `<div class="text">${h.textHtml}</div>` : ""}${h.pathHtml ? `<div class="path">${h.pathHtml}</div>` : ""}</li>`;
}

/** One lane: {method, channel, label, detail, description, extraHtml?, trace, hits: [hit], empty}. */
export function laneHtml(l) {
  return `<section class="lane" data-method="${esc(l.method)}" data-channel="${esc(l.channel)}"><h2><span>${esc(l.label)}</span><span class="desc">${esc(l.detail || "")}</span></h2>
    <p class="desc">${esc(l.description || "")}</p>${l.extraHtml || ""}<p class="trace">${esc(l.trace)}</p>
    ${l.hits.length ? "" : `<p class="desc missing">${esc(l.empty || "no hit")}</p>`}<ol class="hits">${l.hits.map(hitHtml).join("")}</ol></section>`;
}
