// Builds the page's scripts into sidelight/web/assets (what `sidelight export-web` copies into a site):
// page.js (the main thread), worker.js (the search worker with onnxruntime-web, as a string the page
// starts from a Blob URL: a page opened from disk may not start a worker from a file), style.css and
// onnxruntime-web's WebAssembly binary.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";

const out = new URL("../sidelight/web/assets/", import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const common = { bundle: true, format: "iife", platform: "browser", target: "es2022", minify: true, write: false, logLevel: "warning" };
const worker = await build({ ...common, entryPoints: ["src/worker.js"] });
writeFileSync(out + "worker.js", `window.SIDELIGHT_WORKER_SRC = ${JSON.stringify(worker.outputFiles[0].text)};\n`);
const page = await build({ ...common, entryPoints: ["src/page.js"] });
writeFileSync(out + "page.js", page.outputFiles[0].text);
copyFileSync("src/style.css", out + "style.css");
copyFileSync("node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm", out + "ort-wasm-simd-threaded.wasm");
console.log(`built ${out}: worker.js ${(readFileSync(out + "worker.js").length / 1e3).toFixed(0)} kB, page.js ${(readFileSync(out + "page.js").length / 1e3).toFixed(0)} kB`);
