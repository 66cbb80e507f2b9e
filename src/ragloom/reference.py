"""Generate docs/reference from the code: JSON schemas, the settings reference, the CLI reference.

Run `python -m ragloom.reference` from the repository root to rewrite `docs/reference/`, or
`python -m ragloom.reference --check` to list the files that differ (exit code 1).
`tests/unit/test_reference.py` runs the check, so a stale reference fails the suite. The output is
deterministic: no timestamps, no absolute paths, no defaults that depend on the machine.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo

from ragloom.settings import ENV_PREFIX, RagSettings, flatten

COMMAND = "python -m ragloom.reference"
"""The command that regenerates the reference (run from the repository root)."""

DEFAULT_OUT = Path("docs/reference")

MACHINE_DEFAULTS = {
    "cache_dir": "`$XDG_CACHE_HOME/ragloom`, else `~/.cache/ragloom` (per user)",
}
"""Settings whose effective default depends on the machine, rendered as a description."""

NOTES = {
    "profile": "the profile preset the other settings start from",
    "data_dir": "all on-disk state: Chroma, BM25 indexes, manifests, quarantine",
    "collection": "the collection a run reads or an ingest writes",
    "chroma_url": "a Chroma server (`http://HOST:PORT`); none = embedded Chroma under data_dir",
    "max_query_chars": "longest question accepted",
    "embedding.provider": "embedding library",
    "embedding.model": "a packaged model name, a local path or a sentence-transformers id",
    "embedding.batch_size": "texts per embedding call at ingest",
    "embedding.device": "torch device of the embedding model",
    "chunker.name": "how documents are split into chunks",
    "chunker.overlap": "characters shared by consecutive chunks (less than size)",
    "chunker.semantic_threshold": "semantic chunker: similarity below which a new chunk starts",
    "ingest.csv_mode": "row: one document per CSV data row; file: the whole file as one document",
    "ingest.max_bytes": "largest source read; a larger one is rejected",
    "transform.name": "query transformation before retrieval (the LLM transforms need a chat model)",
    "transform.n_variants": "query variants a transform writes",
    "retrieval.mode": "vector, BM25 or both legs fused",
    "retrieval.candidate_k": "candidates per retrieval leg",
    "retrieval.fusion": "how the legs' rankings are fused: reciprocal rank or convex combination",
    "retrieval.rrf_k": "the k of reciprocal rank fusion",
    "retrieval.convex_bm25_weight": "convex fusion: weight of the normalised BM25 score",
    "retrieval.mmr": "diversify the fused candidates with maximal marginal relevance",
    "retrieval.mmr_lambda": "MMR: weight of relevance against redundancy (1 = relevance only)",
    "rerank.name": "second-stage reranker",
    "rerank.model": "cross-encoder: model path or id",
    "rerank.top_n": "passages assembled for the answer (per run: `top_n` in the input, CLI `-n`)",
    "assemble.token_budget": "tokens of passages handed to generation",
    "assemble.chars_per_token": "characters counted as one token for the budget",
    "assemble.ordering": "prompt order of the passages: edges = best at both ends, weakest in "
    "the middle; linear = rank order",
    "chat.provider": "none = the offline extractive and heuristic paths",
    "chat.model": "model name sent to the endpoint",
    "chat.base_url": "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1",
    "chat.api_key_env": "environment variable holding the API key",
    "chat.temperature": "sampling temperature",
    "generate.enabled": "generate an answer (off: retrieval only)",
    "generate.max_chars": "longest answer in characters",
    "groundedness.enabled": "check each answer's claims against the passages it cites",
    "groundedness.checker": "heuristic: offline claim support; llm: one chat call",
    "groundedness.threshold": "support score below which an answer is `ungrounded`",
    **{f"chat.timeouts.{stage}": f"seconds a {stage} chat call may take (unset: chat.timeout_s)"
       for stage in ("transform", "rerank", "groundedness", "grade", "rewrite", "classify")},
    "web.max_results": "pages a web search returns",
    "web.timeout_s": "seconds a web search may take",
    "adaptive.classifier": "heuristic: zero model calls; llm: one constrained chat call",
    "ranking.recency_half_life_days": "age at which a passage's freshness halves",
    "api.port": "port to bind",
}
"""Descriptions of the settings whose field gives none (the field's own description wins)."""


def _choices() -> dict[str, list[str]]:
    """Allowed values of the settings that take a registered name."""
    from ragloom.ingestion.chunkers import CHUNKERS
    from ragloom.nodes.transform import TRANSFORMS
    from ragloom.profiles.presets import profile_names
    from ragloom.providers.embeddings import PROVIDERS
    from ragloom.providers.rerankers import reranker_names

    return {
        "profile": profile_names(),
        "chunker.name": sorted(CHUNKERS),
        "transform.name": list(TRANSFORMS),
        "rerank.name": reranker_names(),
        "embedding.provider": list(PROVIDERS),
    }


_HEADER = f"<!-- generated by `{COMMAND}` from the code; do not edit by hand -->\n\n"


def _json_text(value: Any) -> str:
    """JSON with sorted keys, two-space indents and a trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schema_files() -> dict[str, str]:
    """The JSON schemas: answers and ingestion reports as returned, inputs and settings as read."""
    from ragloom.state import IngestionReport, RagAnswer, RagInput

    return {
        "schemas/rag_answer.json": _json_text(RagAnswer.model_json_schema(mode="serialization")),
        "schemas/ingestion_report.json": _json_text(
            IngestionReport.model_json_schema(mode="serialization")),
        "schemas/rag_input.json": _json_text(TypeAdapter(RagInput).json_schema()),
        "schemas/settings.json": _json_text(RagSettings.model_json_schema()),
    }


# --------------------------------------------------------------------------------------------
# settings.md


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _type_name(annotation: Any) -> str:
    """A readable name of a field's type: Literal values, `X | null`, list[...], dict[...]."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join("null" if a is type(None) else _type_name(a) for a in args)
    if origin in (list, dict, tuple, set, frozenset):
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in args)}]"
    if annotation is Any:
        return "any"
    if isinstance(annotation, type):
        return "path" if issubclass(annotation, Path) else annotation.__name__
    return str(annotation)


_BOUNDS: dict[type[Any], tuple[str, str]] = {
    annotated_types.Ge: ("ge", "≥"),
    annotated_types.Gt: ("gt", ">"),
    annotated_types.Le: ("le", "≤"),
    annotated_types.Lt: ("lt", "<"),
    annotated_types.MinLen: ("min_length", "length ≥"),
    annotated_types.MaxLen: ("max_length", "length ≤"),
}


def _bounds(info: FieldInfo) -> str:
    """A field's numeric or length bounds, e.g. `≥ 1, ≤ 100`."""
    parts = []
    for item in info.metadata:
        for kind, (attr, sign) in _BOUNDS.items():
            if isinstance(item, kind):
                parts.append(f"{sign} {getattr(item, attr)}")
    return ", ".join(parts)


def _section_model(annotation: Any) -> type[BaseModel] | None:
    """The settings section a field holds, or None for a leaf."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def env_name(dotted: str) -> str:
    """The environment variable of a setting: RAGLOOM_ + its path in capitals, `__` between levels."""
    return ENV_PREFIX + dotted.upper().replace(".", "__")


def _default_text(dotted: str, defaults: dict[str, Any]) -> str:
    if dotted in MACHINE_DEFAULTS:
        return MACHINE_DEFAULTS[dotted]
    return f"`{json.dumps(defaults[dotted], ensure_ascii=False)}`"


def _sections(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, type[BaseModel]]]:
    """(dotted prefix, section model) for a model and every section inside it, depth first."""
    yield prefix, model
    for name, info in model.model_fields.items():
        section = _section_model(info.annotation)
        if section is not None:
            yield from _sections(section, f"{prefix}{name}.")


def _settings_table(prefix: str, model: type[BaseModel], defaults: dict[str, Any],
                    choices: dict[str, list[str]]) -> list[str]:
    rows = ["| setting | type | default | environment variable | description |",
            "|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        if _section_model(info.annotation) is not None:
            continue
        dotted = f"{prefix}{name}"
        kind = _type_name(info.annotation)
        if dotted in choices:
            kind = f"{kind}: " + " | ".join(json.dumps(c) for c in choices[dotted])
        bounds = _bounds(info)
        kind = f"{kind} ({bounds})" if bounds else kind
        rows.append(f"| `{dotted}` | {_cell(kind)} | {_cell(_default_text(dotted, defaults))} "
                    f"| `{env_name(dotted)}` | {_cell(info.description or NOTES.get(dotted, ''))} |")
    return rows


def _presets_table() -> list[str]:
    """What each profile preset sets, key by key."""
    from ragloom.profiles.presets import preset, profile_names

    names = profile_names()
    layers = {name: flatten(preset(name)) for name in names}
    keys = sorted({key for layer in layers.values() for key in layer})
    rows = ["| setting | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for key in keys:
        cells = [f"`{json.dumps(layers[n][key])}`" if key in layers[n] else "—" for n in names]
        rows.append(f"| `{key}` | " + " | ".join(cells) + " |")
    return rows


def settings_markdown() -> str:
    """The settings reference: every setting of RagSettings, section by section."""
    defaults = flatten(RagSettings.model_validate({}).model_dump(mode="json"))
    choices = _choices()
    lines = [
        "# Settings reference",
        "",
        "Every setting of `ragloom.settings.RagSettings`. Values layer as profile preset ← config",
        "file ← environment ← call site (Python keywords, CLI flags), key by key; `ragloom config",
        "show` prints each resolved value and where it came from. The config file is the first of",
        "`--config FILE` (Python: `config_file=`), `$RAGLOOM_CONFIG`, `./ragloom.yaml`.",
        "",
        "Environment variables are `RAGLOOM_` plus the setting's path in capitals, `__` between",
        "levels. Their values are YAML for mappings and lists (`{a: 1}`, `[x, y]`), else plain",
        "strings that the setting's type converts; an empty variable counts as unset; an unknown",
        "`RAGLOOM_*` name is an error. `RAGLOOM_CONFIG` names the config file and is not a setting.",
        "",
        "The defaults below are the model's own; a profile preset changes some of them (see",
        "[Profile presets](#profile-presets)). Bounds are checked when settings are loaded.",
        "JSON schema: [schemas/settings.json](schemas/settings.json).",
    ]
    for prefix, model in _sections(RagSettings):
        level = "#" * min(1 + max(prefix.count("."), 1), 4)
        lines += ["", f"{level} {prefix.rstrip('.') or 'Top level'}", ""]
        doc = inspect.cleandoc(model.__doc__ or "")
        if doc and prefix:
            lines += [" ".join(doc.split()), ""]
        lines += _settings_table(prefix, model, defaults, choices)
    lines += ["", "## Profile presets", "",
              "What each profile sets on top of the defaults (— : not set, the default applies).",
              "", *_presets_table()]
    return _HEADER + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# cli.md


CLI_INTRO = """\
Every `ragloom` command with its arguments and options, rendered by Typer's own docs utility.
Exit codes: 0 success; 1 an unexpected error (one line pointing to `--debug`), a source that
failed in `ingest`, a missed floor in `eval --gate`; 2 a usage or configuration mistake (one line
saying what, where and what to do); 130 interrupted. How-to: [../howto/cli.md](../howto/cli.md).
"""


def cli_markdown() -> str:
    """The CLI reference: every command of the Typer app, its arguments and options."""
    import typer
    from typer.cli import get_docs_for_click
    from typer.models import Context

    from ragloom.cli import app

    root = typer.main.get_command(app)
    docs = get_docs_for_click(obj=root, ctx=Context(root, info_name="ragloom"), name="ragloom",
                              title="CLI reference")
    title, _, body = docs.partition("\n")
    return _HEADER + title + "\n\n" + CLI_INTRO + body.rstrip() + "\n"


# --------------------------------------------------------------------------------------------
# writing and checking

GENERATORS: dict[str, Callable[[], str]] = {
    "settings.md": settings_markdown,
    "cli.md": cli_markdown,
}


def generate() -> dict[str, str]:
    """Every generated file of docs/reference: relative path → text."""
    files = schema_files()
    files.update({name: make() for name, make in GENERATORS.items()})
    return dict(sorted(files.items()))


def _differs(path: Path, text: str) -> bool:
    return not path.is_file() or path.read_text(encoding="utf-8") != text


def write(out_dir: Path) -> list[Path]:
    """Write the reference under out_dir; return the files whose content changed."""
    changed = []
    for name, text in generate().items():
        path = out_dir / name
        if _differs(path, text):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
            changed.append(path)
    return changed


def stale(out_dir: Path) -> list[str]:
    """Generated files missing from out_dir or different from what the code generates now."""
    return [name for name, text in generate().items() if _differs(out_dir / name, text)]


def main(argv: list[str] | None = None) -> int:
    """Regenerate docs/reference, or with --check report the stale files (exit code 1)."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 and list the files that are stale")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"output directory (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    if args.check:
        names = stale(args.out)
        for name in names:
            print(f"stale: {args.out / name}", file=sys.stderr)
        if names:
            print(f"docs/reference is stale: run `{COMMAND}`", file=sys.stderr)
        return 1 if names else 0
    for path in write(args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
