"""The chat page in a real headless browser (Debian's chromium, driven by playwright): ask,
watch the answer stream in, click a `[n]` marker and see the passage highlighted in its source
text, see the trace. A screenshot is kept under test-artifacts/ (or $RAGLOOM_TEST_ARTIFACTS)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.servers import RagloomServe, ragloom_serve
from tests.conftest import ROOT
from tests.integration.servers import ingest_example_kb

pytestmark = pytest.mark.integration
QUESTION = "What does error E204 mean?"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RagloomServe]:
    """The service over the example knowledge base (offline: extractive answers)."""
    root = tmp_path_factory.mktemp("service-browser")
    ingest_example_kb(root / "data", "demo")
    with ragloom_serve(["--data-dir", str(root / "data"), "-c", "demo"],
                       log_path=root / "serve.log") as server:
        yield server


def test_ask_stream_and_open_a_citation_in_its_source(served: RagloomServe) -> None:
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (apt-get install -y chromium; .ci/run "
                    "installs it when apt is available)")
    from playwright.sync_api import sync_playwright

    artifacts = Path(os.environ.get("RAGLOOM_TEST_ARTIFACTS", ROOT / "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(served.url + "/")
            page.wait_for_selector("#collection option[value=demo]", state="attached")
            page.fill("#question", QUESTION)
            page.click("#send")
            page.wait_for_selector("body[data-state=answered]", timeout=120_000)
            answer = page.inner_text("#answer")
            assert "E204" in answer
            markers = page.locator("#answer button.marker")
            assert markers.count() >= 1
            first = markers.first
            marker = int(first.get_attribute("data-marker"))
            first.click()
            page.wait_for_selector("#passage")
            highlighted = page.inner_text("#passage")
            claim = page.inner_text("#passage strong.claim")  # the quoted sentence, emphasised
            assert claim and " ".join(claim.split()) in answer
            assert page.is_visible("#source")
            page.click("#trace-box summary")
            stages = page.locator("#trace tbody tr td:first-child").all_inner_texts()
            assert {"retrieve", "generate", "answer"} <= set(stages)
            page.screenshot(path=str(artifacts / "chat-page.png"), full_page=True)
        finally:
            browser.close()
    rest = httpx.post(f"{served.url}/rag/ask", json={"query": QUESTION}, timeout=60).json()
    assert rest["metrics"]["cache_hit"]  # the page's answer, served again from the cache
    cited = next(c for c in rest["citations"] if c["marker"] == marker)
    assert " ".join(highlighted.split()) == " ".join(cited["text"].split())
    streamed = [line for line in served.access_lines() if line.get("route") == "/rag/ask"]
    assert streamed[0]["cache"] == "miss" and streamed[0]["has_citations"]
