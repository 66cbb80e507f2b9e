"""Chat-model defaults on the local server the README points to: SmolLM2-135M on xllamacpp.

    python benchmarks/chat_defaults.py [MAX_TOKENS ...]      # default: 256 128 512

Ingests the example knowledge base into a temporary data directory, serves SmolLM2 on 127.0.0.1
(2 threads), prints raw tokens/s, then the generate stage's time and answer length of
`ragloom.ask` (balanced, LLM generation) for each max_tokens. Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
QUESTIONS = ["How long does the Lumen Pro keep running without sunlight?",
             "What does error E204 mean?"]


def main() -> None:
    """Measure and print."""
    from langchain_openai import ChatOpenAI

    from ragloom.runner import ask, ingest
    from ragloom.settings import load_settings
    from tests.integration.servers import smollm2_server

    sizes = [int(x) for x in sys.argv[1:]] or [256, 128, 512]
    data = Path(tempfile.mkdtemp(prefix="ragloom-chat-")) / "data"
    ingest([str(ROOT / "examples" / "kb")], collection="chat", data_dir=data)
    print("load", os.getloadavg(), flush=True)
    with smollm2_server(n_ctx=4096, threads=2) as url:
        raw = ChatOpenAI(base_url=url, api_key="local", model="local", temperature=0,
                         max_tokens=256, timeout=600)
        start = time.perf_counter()
        reply = raw.invoke("Write a long essay about wind measurement.")
        seconds = time.perf_counter() - start
        tokens = (reply.usage_metadata or {}).get("output_tokens") or 0
        print(json.dumps({"raw_s": round(seconds, 2), "out_tokens": tokens,
                          "tok_per_s": round(tokens / seconds, 1)}), flush=True)
        for max_tokens in sizes:
            for question in QUESTIONS:
                settings = load_settings("balanced", data_dir=data, collection="chat", environ={},
                                         chat={"provider": "openai", "base_url": url,
                                               "max_tokens": max_tokens, "timeout_s": 600,
                                               "timeouts": {"generate": 600}})
                answer = ask(question, settings=settings)
                step = next(s for s in answer.trace if s.stage == "generate")
                print(json.dumps({"max_tokens": max_tokens, "question": question[:30],
                                  "generate_s": round(step.duration_ms / 1000, 2),
                                  "generator": step.detail.get("generator"),
                                  "chars": len(answer.text), "best_effort": answer.best_effort}),
                      flush=True)
    print("load", os.getloadavg(), flush=True)


if __name__ == "__main__":
    main()
