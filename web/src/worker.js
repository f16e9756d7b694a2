// The page's Web Worker: holds the index, answers searches, and encodes queries with the int8 MiniLM
// on onnxruntime-web (WebAssembly, one thread), so the page never blocks while it ranks.
//
// Messages in:  {type: "init", manifest, index, tables, model?, tokenizer?, wasm?}
//               {type: "search", id, query, methods, k, qvec?}   (qvec: a query vector to use instead of encoding)
//               {type: "encode", id, texts}
// Messages out: {type: "ready", part: "index" | "model", ms} · {type: "result", id, ...} · {type: "error", id, message}

import * as ort from "onnxruntime-web/wasm";
import { Engine } from "./engine.js";
import { WordPiece } from "./wordpiece.js";

let engine = null, session = null, wordpiece = null, modelReady = null;

async function setUpModel(msg) {
  const t0 = performance.now();
  ort.env.wasm.numThreads = 1;  // one thread, like the pilot's browser measurements (no cross-origin isolation needed)
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmBinary = msg.wasm;  // handed over by the page: nothing is fetched
  session = await ort.InferenceSession.create(new Uint8Array(msg.model), { executionProviders: ["wasm"] });
  wordpiece = new WordPiece(JSON.parse(new TextDecoder().decode(msg.tokenizer)));
  await encode("warm up");
  return performance.now() - t0;
}

/** Mean-pooled, L2-normalised token states, as `models.embedder.Embedder.encode` computes them. */
async function encode(text) {
  const d = engine.m.dense;
  const ids = wordpiece.encode(d.query_prefix + text, d.max_length).ids;
  const n = ids.length, big = (f) => new ort.Tensor("int64", BigInt64Array.from(ids, f), [1, n]);
  const feeds = { input_ids: big((v) => BigInt(v)), attention_mask: big(() => 1n) };
  if (session.inputNames.includes("token_type_ids")) feeds.token_type_ids = big(() => 0n);
  const name = session.outputNames.includes("last_hidden_state") ? "last_hidden_state" : session.outputNames[0];
  const hidden = (await session.run(feeds))[name].data, dim = d.dim;
  const v = new Float64Array(dim);
  for (let t = 0; t < n; t++) for (let j = 0; j < dim; j++) v[j] += hidden[t * dim + j];
  let norm = 0.0;
  for (let j = 0; j < dim; j++) { v[j] /= n; norm += v[j] * v[j]; }
  norm = Math.max(Math.sqrt(norm), 1e-12);
  return Float32Array.from(v, (x) => x / norm);
}

async function search({ query, methods, k, qvec }) {
  const timings = {};
  const needsVector = methods.some((m) => m === "dense" || m === "rrf" || (m === "relation" && engine.vectors));
  if (needsVector && !qvec) {
    await modelReady;
    const t0 = performance.now();
    qvec = await encode(query);
    timings.encode = performance.now() - t0;
  }
  const lanes = {};
  for (const m of methods) {
    const t0 = performance.now();
    const r = engine.rank(m, query, k, qvec);
    timings[m] = performance.now() - t0;
    lanes[m] = r;
  }
  return { lanes, timings };
}

self.onmessage = async ({ data: msg }) => {
  try {
    if (msg.type === "init") {
      const t0 = performance.now();
      engine = new Engine(msg.manifest, msg.index, msg.tables);
      self.postMessage({ type: "ready", part: "index", ms: performance.now() - t0 });
      if (msg.model) {
        modelReady = setUpModel(msg);
        self.postMessage({ type: "ready", part: "model", ms: await modelReady });
      }
    } else if (msg.type === "search") {
      self.postMessage({ type: "result", id: msg.id, ...(await search(msg)) });
    } else if (msg.type === "encode") {
      await modelReady;
      const vectors = [];
      for (const t of msg.texts) vectors.push(Array.from(await encode(t)));
      self.postMessage({ type: "result", id: msg.id, vectors });
    }
  } catch (err) {
    self.postMessage({ type: "error", id: msg.id, message: String((err && err.message) || err) });
  }
};
