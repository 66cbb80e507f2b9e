"""The assemble node: the token budget is never overrun, markers stay rank based, edges layout."""

from __future__ import annotations

import pytest

from ragloom.nodes.assemble import assemble, fit_budget, layout_order, render_context
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.text import estimate_tokens
from ragloom.settings import RagSettings
from ragloom.state import Chunk, ScoredChunk


def sc(cid: str, text: str, score: float = 1.0) -> ScoredChunk:
    chunk = Chunk(
        id=cid, source_id=f"{cid}.md", doc_id=cid, text=text, start=100, end=100 + len(text)
    )
    return ScoredChunk(chunk=chunk, score=score, score_origin="rrf")


def deps_for(budget: int, ordering: str = "edges") -> RagDeps:
    settings = RagSettings.model_validate(
        {"assemble": {"token_budget": budget, "chars_per_token": 4.0, "ordering": ordering}}
    )
    return RagDeps(settings=settings, index=None, embedder=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("count", "ordering", "expected"),
    [
        (5, "edges", [1, 3, 5, 4, 2]),
        (4, "edges", [1, 3, 4, 2]),
        (2, "edges", [1, 2]),
        (1, "edges", [1]),
        (0, "edges", []),
        (4, "linear", [1, 2, 3, 4]),
    ],
)
def test_layout_order(count: int, ordering: str, expected: list[int]) -> None:
    assert layout_order(count, ordering) == expected


@pytest.mark.parametrize("budget", [50, 60, 80, 120, 200, 400])
def test_budget_is_never_overrun(budget: int) -> None:
    ranked = [sc(f"c{i}", ("word " * (10 + 17 * i)).strip(), 1.0 - i / 10) for i in range(8)]
    passages, dropped, _ = fit_budget(ranked, budget, 4.0)
    assert estimate_tokens(render_context(passages, "edges"), 4.0) <= budget
    assert len(passages) + dropped == len(ranked)


def test_skips_a_large_chunk_but_keeps_smaller_later_ones() -> None:
    ranked = [sc("a", "x" * 100), sc("b", "y" * 400), sc("c", "z" * 50)]
    update = assemble({"ranked": ranked}, deps_for(60))
    assert [p.chunk.id for p in update["passages"]] == ["a", "c"]
    assert update["trace"][0].detail["dropped"] == 1


def test_oversized_first_chunk_is_truncated_with_exact_offsets() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(60))
    update = assemble({"ranked": [sc("a", text)]}, deps_for(50))
    (passage,) = update["passages"]
    assert text.startswith(passage.chunk.text) and passage.chunk.text.endswith(".")
    assert passage.chunk.end - passage.chunk.start == len(passage.chunk.text)
    assert update["trace"][0].detail["truncated_first"] is True
    assert update["trace"][0].detail["tokens"] <= 50


def test_markers_stay_rank_based_in_edges_layout() -> None:
    ranked = [sc(f"r{i}", f"text {i}", 1.0 - i / 10) for i in range(1, 6)]
    update = assemble({"ranked": ranked}, deps_for(2000))
    assert [p.chunk.id for p in update["passages"]] == ["r1", "r2", "r3", "r4", "r5"]
    assert update["trace"][0].detail["layout"] == [1, 3, 5, 4, 2]
    context = render_context(update["passages"], "edges")
    blocks = context.split("\n\n")
    assert blocks[0] == "[1] (r1.md) text 1" and blocks[-1] == "[2] (r2.md) text 2"
    assert blocks[2] == "[5] (r5.md) text 5"
