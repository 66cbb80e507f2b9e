// The ragloom chat page: stream an answer over SSE, show its citations, the cited passage
// highlighted in its source text, and the trace.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { citations: [], collection: "", answer: "" };

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("apikey").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

function text(node, value) { node.textContent = value; return node; }

async function loadCollections() {
  const select = $("collection");
  select.replaceChildren();
  const response = await fetch("/collections", { headers: headers() });
  if (!response.ok) {
    text($("status"), "collections: " + (await errorText(response)));
    return;
  }
  const body = await response.json();
  for (const c of body.collections) {
    const option = text(document.createElement("option"), `${c.name} (${c.chunks})`);
    option.value = c.name;
    if (c.name === body.default) option.selected = true;
    select.append(option);
  }
}

async function errorText(response) {
  try {
    const body = await response.json();
    if (Array.isArray(body.detail)) return body.detail.map((e) => `${e.loc.join(".")}: ${e.msg}`).join("; ");
    return [body.detail, body.hint].filter(Boolean).join(" — ");
  } catch (e) { return response.statusText; }
}

// Parse a fetch body as Server-Sent Events: calls onEvent(name, data) per event.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message", data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trimStart();
      }
      if (data) onEvent(name, JSON.parse(data));
    }
  }
}

function renderAnswer(answer, citations) {
  const box = $("answer");
  box.classList.remove("streaming");
  box.replaceChildren();
  const known = new Set(citations.map((c) => c.marker));
  let last = 0;
  for (const m of answer.matchAll(/\[(\d+)\]/g)) {
    box.append(document.createTextNode(answer.slice(last, m.index)));
    const n = Number(m[1]);
    if (known.has(n)) {
      const button = text(document.createElement("button"), `[${n}]`);
      button.className = "marker";
      button.dataset.marker = String(n);
      button.type = "button";
      button.addEventListener("click", () => showSource(n));
      box.append(button);
    } else {
      box.append(document.createTextNode(m[0]));
    }
    last = m.index + m[0].length;
  }
  box.append(document.createTextNode(answer.slice(last)));
  if (!answer) text(box, "(no generated text)");
}

function renderCitations(citations) {
  const list = $("citations");
  list.replaceChildren();
  for (const c of citations) {
    const item = document.createElement("li");
    item.value = c.marker;
    const link = text(document.createElement("button"), `[${c.marker}]`);
    link.className = "marker";
    link.type = "button";
    link.dataset.marker = String(c.marker);
    link.addEventListener("click", () => showSource(c.marker));
    item.append(link, document.createTextNode(` ${c.title || c.source_id} — score ${c.score.toFixed(3)} (${c.score_origin})`));
    list.append(item);
  }
}

function renderTrace(trace) {
  const body = $("trace").querySelector("tbody");
  body.replaceChildren();
  for (const step of trace) {
    const row = document.createElement("tr");
    row.append(text(document.createElement("td"), step.stage),
               text(document.createElement("td"), step.duration_ms.toFixed(1)));
    const detail = text(document.createElement("td"), JSON.stringify(step.detail));
    detail.className = "detail";
    row.append(detail);
    body.append(row);
  }
}

// Where the answer's sentence citing [marker] appears word for word in the passage (an
// extractive answer quotes it), as [start, end] offsets; null when it is paraphrased. A unit the
// extractive answer labels with its heading or field (`E204 — Rain gauge blocked: The bucket…`)
// is looked up without its labels, one at a time.
function claimIn(passage, marker) {
  const answer = state.answer || "";
  for (const sentence of answer.split(/(?<=[.!?])\s+/)) {
    if (!sentence.includes(`[${marker}]`)) continue;
    let plain = sentence.replace(/\s*\[\d+(?:\s*[,;]\s*\d+)*\]/g, "").replace(/[.!?]+$/, "").trim();
    while (plain) {
      // the same words, whatever whitespace the source has between them
      const words = plain.split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
      const found = new RegExp(words.join("\\s+"), "i").exec(passage);
      if (found) return [found.index, found.index + found[0].length];
      const label = plain.indexOf(": ");
      plain = label < 0 ? "" : plain.slice(label + 2).trim();
    }
  }
  return null;
}

async function showSource(marker) {
  const citation = state.citations.find((c) => c.marker === marker);
  if (!citation) return;
  document.querySelectorAll(".marker").forEach((b) => b.classList.toggle("active", b.dataset.marker === String(marker)));
  const url = `/rag/source?collection=${encodeURIComponent(state.collection)}&chunk_id=${encodeURIComponent(citation.id)}`;
  const response = await fetch(url, { headers: headers() });
  const panel = $("source");
  panel.hidden = false;
  const pre = $("source-text");
  if (!response.ok) {
    text(pre, await errorText(response));
    return;
  }
  const source = await response.json();
  text($("source-title"), source.title || source.source_id);
  text($("source-id"), `${source.source_id} — characters ${citation.start}–${citation.end}`);
  const passage = source.text.slice(citation.start, citation.end);
  const mark = document.createElement("mark");
  mark.id = "passage";
  const claim = claimIn(passage, marker);
  if (claim) {
    const strong = text(document.createElement("strong"), passage.slice(claim[0], claim[1]));
    strong.className = "claim";
    mark.append(document.createTextNode(passage.slice(0, claim[0])), strong,
                document.createTextNode(passage.slice(claim[1])));
  } else {
    text(mark, passage);
  }
  pre.replaceChildren(document.createTextNode(source.text.slice(0, citation.start)), mark,
                      document.createTextNode(source.text.slice(citation.end)));
  mark.scrollIntoView({ block: "center" });
}

function finish(body) {
  state.citations = body.citations || [];
  state.answer = body.answer || "";
  state.collection = body.collection;
  renderAnswer(body.answer, state.citations);
  renderCitations(state.citations);
  renderTrace(body.trace || []);
  const m = body.metrics;
  text($("status"), `trace ${body.trace_id} · ${m.cache_hit ? "cache hit" : "computed"} · ` +
       `${m.total_ms.toFixed(0)} ms · ${m.model_calls} model call(s) · guardrail ${m.guardrail}` +
       (m.best_effort ? " · best-effort" : ""));
  document.body.dataset.state = "answered";
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  document.body.dataset.state = "asking";
  const box = $("answer");
  box.classList.add("streaming");
  box.replaceChildren();
  $("citations").replaceChildren();
  $("source").hidden = true;
  text($("status"), "asking…");
  const payload = { query: question, stream: true, collection: $("collection").value || undefined,
                    profile: $("profile").value || undefined };
  const response = await fetch("/rag/ask", { method: "POST", headers: headers(), body: JSON.stringify(payload) });
  if (!response.ok) {
    text($("status"), await errorText(response)).className = "error";
    document.body.dataset.state = "failed";
    return;
  }
  $("status").className = "";
  await readEvents(response, (name, data) => {
    if (name === "stage") text($("status"), `stage: ${data.stage}`);
    else if (name === "token") box.append(document.createTextNode(data.text));
    else if (name === "final") finish(data);
    else if (name === "error") {
      if (data.answer) finish(data.answer);
      text($("status"), `${data.detail} (best-effort answer)`).className = "error";
    }
  });
}

$("ask").addEventListener("submit", ask);
$("apikey").addEventListener("change", () => { sessionStorage.setItem("ragloom-key", $("apikey").value); loadCollections(); });
$("apikey").value = sessionStorage.getItem("ragloom-key") || "";
loadCollections();
