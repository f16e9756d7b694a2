// The one page: opened from an export it searches in the browser (local.js); served by `sidelight serve`
// at `/` it is the lab view over the server's lanes (lab.js). Both draw lanes with view.js.

import { startServed } from "./lab.js";
import { startLocal } from "./local.js";

const M = window.SIDELIGHT_MANIFEST;
document.querySelector("#corpus").textContent = M.corpus;
if (M.served) startServed(M);
else startLocal(M);
