// The playground: every number comes from the module (ids and their offsets from
// encodeWithOffsets, scripts from the core's tables, UBE symbols from its router); this file
// only lays them out. window.supertokDemo holds the last rendering's numbers (the browser test
// reads them).
import * as st from "../supertok.mjs";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
if (params.has("text")) $("text").value = params.get("text");
if (params.has("encoding")) $("encoding").value = params.get("encoding");
if (params.has("specials")) $("specials").checked = params.get("specials") !== "0";

let model = null; // an Encoding loaded from a file, used instead of the selected one
let seq = 0;

async function current() {
  return model ?? st.getEncoding($("encoding").value);
}

function perScript(text) {
  // split into runs of one script, then count each run's UTF-8 bytes and UBE symbols
  const rows = new Map();
  let run = "", runScript = null;
  const flush = () => {
    if (!run) return;
    const r = rows.get(runScript) ?? { chars: 0, bytes: 0, symbols: 0 };
    r.chars += [...run].length;
    r.bytes += new TextEncoder().encode(run).length;
    r.symbols += st.ubeEncodeSymbols(run).length;
    rows.set(runScript, r);
    run = "";
  };
  for (const ch of text) {
    const s = st.scriptOf(ch.codePointAt(0));
    if (s !== runScript) { flush(); runScript = s; }
    run += ch;
  }
  flush();
  return [...rows].sort((a, b) => b[1].bytes - a[1].bytes);
}

async function render() {
  const my = ++seq;
  const text = $("text").value;
  $("error").textContent = "";
  try {
    const enc = await current();
    if (my !== seq) return; // a newer rendering started meanwhile
    const opts = $("specials").checked ? { allowedSpecial: "all" } : { disallowedSpecial: [] };
    const { ids, starts } = enc.encodeWithOffsets(text, opts);
    const frag = document.createDocumentFragment();
    for (let k = 0; k < ids.length; k++) {
      const span = document.createElement("span");
      // a token that starts inside a character shares its start with the next: shown empty
      span.textContent = text.slice(starts[k], k + 1 < ids.length ? starts[k + 1] : text.length);
      span.className = enc.isSpecialToken(ids[k]) ? "special" : `c${k % 5}`;
      span.title = `id ${ids[k]}`;
      span.dataset.id = ids[k];
      frag.append(span);
    }
    $("tokens").replaceChildren(frag);
    const chars = [...text].length, bytes = new TextEncoder().encode(text).length;
    $("n-tokens").textContent = ids.length;
    $("n-chars").textContent = chars;
    $("n-bytes").textContent = bytes;
    $("which").textContent = `${enc.name} (${enc.alphabet}, ${enc.nVocab} ids)`;
    const tbody = document.querySelector("#scripts tbody");
    const scripts = text.isWellFormed?.() === false ? [] : perScript(text);
    tbody.replaceChildren(...scripts.map(([name, r]) => {
      const tr = document.createElement("tr");
      for (const v of [name, r.chars, r.bytes, r.symbols, (r.symbols / r.bytes).toFixed(2)]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.append(td);
      }
      return tr;
    }));
    window.supertokDemo = { encoding: enc.name, ids: Array.from(ids), tokens: ids.length, chars, bytes,
      scripts: Object.fromEntries(scripts) };
  } catch (e) {
    $("error").textContent = String(e.message ?? e);
    window.supertokDemo = { error: String(e.message ?? e) };
  }
}

$("tokens").addEventListener("mouseover", (ev) => {
  const id = ev.target.dataset?.id;
  if (id !== undefined) $("hover").textContent = `id ${id}: ${JSON.stringify(ev.target.textContent)}`;
});
$("text").addEventListener("input", render);
$("specials").addEventListener("change", render);
$("encoding").addEventListener("change", () => { model = null; $("model").value = ""; render(); });
async function loadFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (file.name.endsWith(".stmodel")) {
    model?.free();
    model = await st.loadModel(bytes);
  } else {
    $("text").value = new TextDecoder().decode(bytes);
  }
  render();
}
$("model").addEventListener("change", (ev) => ev.target.files[0] && loadFile(ev.target.files[0]).catch((e) => { $("error").textContent = e.message; }));
const ta = $("text");
ta.addEventListener("dragover", (ev) => { ev.preventDefault(); ta.classList.add("drop"); });
ta.addEventListener("dragleave", () => ta.classList.remove("drop"));
ta.addEventListener("drop", (ev) => {
  ev.preventDefault();
  ta.classList.remove("drop");
  const f = ev.dataTransfer.files[0];
  if (f) loadFile(f).catch((e) => { $("error").textContent = e.message; });
});
render();
