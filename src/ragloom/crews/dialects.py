"""The two crew dialects, read into one draft: ragloom's single file and CrewAI project configs.

- ragloom: one YAML file with `rag:`, `agents:` (keyed by id), `tasks:` (a list with `id`s) and
  `process:`; relative sources resolve against the file's folder.
- CrewAI: a project folder (or its `config/` folder, or one of the two files) holding
  `config/agents.yaml` and `config/tasks.yaml`, both keyed by name, found also in the
  `src/<package>/config/` layout `crewai create crew` makes. Tasks run in the order tasks.yaml
  lists them; the process is `hierarchical` when the project's crew.py says
  `Process.hierarchical` (read as text, never imported); knowledge files resolve against the
  project's `knowledge/` folder, as CrewAI does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragloom.crews.schema import Notice, Problem
from ragloom.crews.validate import Draft
from ragloom.crews.yamlfile import Loc, Spot, YamlDoc, display_path, read_yaml
from ragloom.errors import ConfigError

CREWAI_FILES = ("agents.yaml", "agents.yml", "tasks.yaml", "tasks.yml")
SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "site-packages", "__pycache__",
                          ".ragloom", "build", "dist"})
SEARCH_DEPTH = 4
_HIERARCHICAL = re.compile(r"Process\s*\.\s*hierarchical")


def label(loc: Loc) -> str:
    """A field path as written in messages: `tasks[0].agent`, `researcher.tools[1]`."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _duplicates(doc: YamlDoc) -> list[tuple[Spot, str]]:
    return [(Spot(doc.path, line, label(loc)), str(loc[-1])) for loc, line in doc.duplicates]


def read_ragloom(path: Path) -> Draft:
    """Read a ragloom single-file crew."""
    doc = read_yaml(path)

    def locate(loc: Loc) -> Spot:
        """Where a field of the crew file is."""
        return Spot(path, doc.line(loc), label(loc))

    data = doc.data
    draft = Draft(dialect="ragloom", name=path.stem, source=path, base_dir=path.parent,
                  raw={}, locate=locate, knowledge_dirs=[path.parent])
    if not isinstance(data, dict):
        draft.problems.append(Problem(Spot(path, 1), "a crew file must be a mapping with "
                                      "agents: and tasks:"))
        return draft
    draft.raw = data
    draft.name = str(data.get("name") or path.stem)
    for spot, key in _duplicates(doc):
        draft.problems.append(Problem(spot, f"duplicate key {key!r}: YAML would silently keep "
                                      "only the last one"))
    return draft


def _config_dir(path: Path) -> Path:
    """The folder holding agents.yaml and tasks.yaml for a CrewAI project path."""
    if path.is_file():
        return path.parent
    for candidate in (path / "config", path):
        if any((candidate / name).is_file() for name in CREWAI_FILES[:2]):
            return candidate
    found = sorted(_search(path, 0))
    if len(found) == 1:
        return found[0]
    if not found:
        raise ConfigError("no CrewAI config found: expected config/agents.yaml and "
                          "config/tasks.yaml", where=display_path(path),
                          hint="pass a ragloom crew file or a CrewAI project folder")
    listed = ", ".join(display_path(f) for f in found)
    raise ConfigError(f"several CrewAI configs found: {listed}", where=display_path(path),
                      hint="pass the folder of the one to run")


def _search(folder: Path, depth: int) -> list[Path]:
    """Folders named config holding agents.yaml below folder (hidden and tool folders skipped)."""
    if depth > SEARCH_DEPTH:
        return []
    found = []
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []
    for child in children:
        if child.name.startswith(".") or child.name in SKIPPED_DIRS:
            continue
        if child.name == "config" and any((child / n).is_file() for n in CREWAI_FILES[:2]):
            found.append(child)
        else:
            found.extend(_search(child, depth + 1))
    return found


def _file(config: Path, stem: str) -> Path:
    for suffix in (".yaml", ".yml"):
        if (config / f"{stem}{suffix}").is_file():
            return config / f"{stem}{suffix}"
    raise ConfigError(f"the CrewAI project has no {stem}.yaml", where=display_path(config),
                      hint="a CrewAI project needs config/agents.yaml and config/tasks.yaml")


def _project_name(config: Path, root: Path) -> str:
    """The project's name: its package folder (src layout) or the project folder."""
    owner = config.parent if config.name == "config" else config
    return owner.name if owner.name not in ("src", "") else root.name


def _knowledge_dirs(config: Path, root: Path) -> list[Path]:
    """Where CrewAI knowledge files are looked up: `knowledge/` of the project, then the folders."""
    owner = config.parent if config.name == "config" else config
    folders = [owner, *[p for p in owner.parents if p == root or root in p.parents]]
    if root not in folders:
        folders.append(root)
    ordered = [f / "knowledge" for f in folders] + folders
    return list(dict.fromkeys(ordered))


def read_crewai(path: Path) -> Draft:
    """Read a CrewAI project's config/agents.yaml and config/tasks.yaml."""
    root = path if path.is_dir() else path.parent
    config = _config_dir(path)
    agents_doc = read_yaml(_file(config, "agents"))
    tasks_doc = read_yaml(_file(config, "tasks"))
    task_keys = list(tasks_doc.data) if isinstance(tasks_doc.data, dict) else []

    def locate(loc: Loc) -> Spot:
        """Where a normalised field is: agents in agents.yaml, tasks (by position) in tasks.yaml."""
        if loc[:1] == ("agents",):
            rest = loc[1:]
            return Spot(agents_doc.path, agents_doc.line(rest) if rest else None, label(rest))
        if loc[:1] == ("tasks",) and len(loc) > 1 and isinstance(loc[1], int) \
                and loc[1] < len(task_keys):
            rest = (task_keys[loc[1]], *[p for p in loc[2:] if p != "id"])
            return Spot(tasks_doc.path, tasks_doc.line(rest), label(rest))
        if loc[:1] == ("tasks",):
            return Spot(tasks_doc.path, None, label(loc[1:]))
        return Spot(config, None, label(loc))

    draft = Draft(dialect="crewai", name=_project_name(config, root), source=config,
                  base_dir=root, raw={}, locate=locate,
                  knowledge_dirs=_knowledge_dirs(config, root))
    for doc, what in ((agents_doc, "agents"), (tasks_doc, "tasks")):
        if not isinstance(doc.data, dict):
            draft.problems.append(Problem(Spot(doc.path, 1), f"{doc.path.name} must be a mapping "
                                          f"of {what} by name"))
    if draft.problems:
        return draft
    for doc in (agents_doc, tasks_doc):
        for spot, key in _duplicates(doc):
            draft.notices.append(Notice("duplicate", f"duplicate key {key!r}: the last one is "
                                        "used, as CrewAI does", [str(spot)]))
    agents = _entries(agents_doc, "role", "an agent", draft)
    kept = _entries(tasks_doc, "description", "a task", draft)
    task_keys[:] = list(kept)
    tasks = [{**value, "id": str(key)} if isinstance(value, dict) else value
             for key, value in kept.items()]
    draft.raw = {"agents": agents, "tasks": tasks, "process": _process(config, draft)}
    return draft


def _entries(doc: YamlDoc, required: str, what: str, draft: Draft) -> dict[str, Any]:
    """The entries of a CrewAI config file that are agents (have a role) or tasks (have a
    description); others, such as a block that only holds anchors, are skipped and reported."""
    kept = {}
    for key, value in doc.data.items():
        if isinstance(value, dict) and required not in value:
            draft.notices.append(Notice("skipped", f"{doc.path.name} entry {key!r} has no "
                                        f"{required}: not {what}, skipped",
                                        [str(Spot(doc.path, doc.line((str(key),)), str(key)))]))
        else:
            kept[key] = value
    return kept


def _process(config: Path, draft: Draft) -> str:
    """`hierarchical` when the project's crew.py builds its crew with Process.hierarchical."""
    owner = config.parent if config.name == "config" else config
    crew_py = owner / "crew.py"
    try:
        text = crew_py.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "sequential"
    if _HIERARCHICAL.search(text):
        draft.notices.append(Notice("process", "process 'hierarchical' read from crew.py",
                                    [display_path(crew_py)]))
        return "hierarchical"
    return "sequential"


def read_draft(path: Path) -> Draft:
    """The draft of a crew path: a CrewAI project (folder or its YAML) or a ragloom crew file."""
    if not path.exists():
        raise ConfigError("no such crew file or folder", where=display_path(path),
                          hint="pass a crew .yaml file, a CrewAI project folder or the name of "
                               "a packaged example")
    if path.is_dir() or path.name in CREWAI_FILES:
        return read_crewai(path)
    return read_ragloom(path)
