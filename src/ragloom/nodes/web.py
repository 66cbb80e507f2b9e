"""The web node (CRAG's web search, for questions the collection cannot answer).

A node only when enabled twice: the profile policy (`loop.web`) and the transport
(`web.search_url`, a SearxNG-compatible JSON endpoint: `GET <url>?q=...&format=json`). The result
pages are downloaded with the ingest loader (its time-outs and size cap), parsed, and every page is
screened by the prompt-injection validator before it can be used: rejected pages never enter;
suspicious ones are dropped or kept flagged (`web.suspicious`). Each kept page becomes passages
(chunked like the collection, the best `grade.top_k` by offline relevance to the question) with
`score_origin: web` and the page URL as source, graded again like retrieved passages. Every skip
is traced with its reason; with no usable page the working set is kept as it was.
"""

from __future__ import annotations

from typing import Any

import httpx

from ragloom.errors import RagloomError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.grade import offline_relevance
from ragloom.nodes.trace import StageClock
from ragloom.state import Chunk, RagState, ScoredChunk, SourceDocument, Verdict

STAGE = "web"


def search(question: str, deps: RagDeps) -> list[str]:
    """Result URLs of the search endpoint for the question (at most web.max_results)."""
    settings = deps.settings.web
    response = httpx.get(settings.search_url or "", params={"q": question, "format": "json"},
                         timeout=settings.timeout_s, follow_redirects=True)
    response.raise_for_status()
    results = response.json().get("results") or []
    urls = [str(r["url"]) for r in results if isinstance(r, dict) and r.get("url")]
    return list(dict.fromkeys(urls))[: settings.max_results]


def fetch_page(url: str, deps: RagDeps) -> list[SourceDocument]:
    """Download and parse one result page with the ingest loader (its limits apply)."""
    from ragloom.ingestion.loaders import SourceRef, parse_source, read_source  # web runs only

    ref = SourceRef(source_id=url, origin=url, kind="url")
    return parse_source(read_source(ref, deps.settings.ingest), deps.settings.ingest,
                        deps.settings.resolved_cache_dir())


def screen(docs: list[SourceDocument], deps: RagDeps,
           skipped: list[dict[str, Any]]) -> list[SourceDocument]:
    """Pages the injection scan lets in: rejected ones never, suspicious ones by policy."""
    from ragloom.ingestion.injection.screen import scan_injection  # loaded only when the web step runs

    kept = []
    for doc in docs:
        verdict = scan_injection(doc, budget_s=deps.settings.ingest.scan_budget_s)
        if verdict.status == "rejected" or (
                verdict.status == "suspicious" and deps.settings.web.suspicious == "drop"):
            skipped.append({"url": doc.source_id, "reason": f"injection scan: {verdict.status}",
                            "signals": verdict.signals})
            continue
        if verdict.status == "suspicious":
            doc = doc.model_copy(update={"metadata": {
                **doc.metadata, "suspicious": True, "injection_signals": verdict.signals}})
        kept.append(doc)
    return kept


def page_passages(question: str, docs: list[SourceDocument], deps: RagDeps) -> list[ScoredChunk]:
    """The pages' chunks most relevant to the question, best first, origin `web`."""
    from ragloom.ingestion.chunkers import get_chunker  # loaded only when the web step runs

    chunker = get_chunker(deps.settings.chunker, embedder=deps.embedder)
    chunks: list[Chunk] = [c for doc in docs for c in chunker.split(doc)]
    candidates = [ScoredChunk(chunk=c, score=0.0, score_origin="web") for c in chunks]
    graded = offline_relevance(question, candidates, deps)
    ranked = sorted(zip(candidates, graded, strict=True), key=lambda pair: -pair[1][0])
    return [scored.model_copy(update={"score": relevance})
            for scored, (relevance, _, _) in ranked[: deps.settings.grade.top_k]]


def web(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Search the web for the original question and use the screened result pages."""
    question = state["question"]
    skipped: list[dict[str, Any]] = []
    with StageClock(STAGE) as clock:
        try:
            urls = search(question, deps)
        except (httpx.HTTPError, ValueError) as exc:
            clock.note(error=f"search failed: {type(exc).__name__}: {exc}", results=0)
            verdict = Verdict(stage=STAGE, verdict="failed", reason="the search endpoint failed")
            return {"verdicts": [verdict], "best_effort": True, "trace": clock.trace()}
        docs: list[SourceDocument] = []
        for url in urls:
            try:
                docs += fetch_page(url, deps)
            except RagloomError as exc:
                skipped.append({"url": url, "reason": str(exc)})
        docs = screen(docs, deps, skipped)
        passages = page_passages(question, docs, deps) if docs else []
        clock.note(results=len(urls), pages_used=len({d.source_id for d in docs}),
                   passages=len(passages), skipped=skipped)
        verdict = Verdict(stage=STAGE, verdict="searched" if passages else "no_results",
                          reason=f"{len(passages)} passages from {len(urls)} results")
    update: dict[str, Any] = {"verdicts": [verdict], "trace": clock.trace()}
    if passages:
        update["passages"] = passages
    return update
