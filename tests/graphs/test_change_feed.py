"""Change-fed ingest (`changed=`, `--changed-from`, `--watch`): only the paths a feed names are
looked at, with the same results a full listing gives for them."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragloom.cli import app
from ragloom.errors import ConfigError
from ragloom.runner import ingest
from ragloom.state import IngestionReport
from ragloom.watch import watch_ingest, watch_roots
from tests.graphs.test_ingest_graph import assert_consistent


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {path.stem}\n\n{text}\n", encoding="utf-8")
    return path


def changes(report: IngestionReport) -> dict[str, str]:
    return {Path(sid).name: status for sid, status in report.statuses().items()
            if status != "unchanged"}


class Watched:
    """The reports of a watch running in a thread, and a wait for the next ones."""

    def __init__(self) -> None:
        self.reports: list[IngestionReport] = []
        self._arrived = threading.Condition()

    def on_report(self, report: IngestionReport) -> None:
        with self._arrived:
            self.reports.append(report)
            self._arrived.notify_all()

    def wait(self, done: Callable[[list[IngestionReport]], bool]) -> None:
        with self._arrived:
            assert self._arrived.wait_for(lambda: done(self.reports), timeout=60)

    def first_change(self, since: int) -> dict[str, str]:
        """The changes of the first report after `since` that changed anything."""
        self.wait(lambda reports: any(changes(r) for r in reports[since:]))
        return next(changes(r) for r in self.reports[since:] if changes(r))


@contextlib.contextmanager
def watching(tree: Path, data_dir: Path, **kwargs: object) -> Iterator[Watched]:
    """Run `watch_ingest` over tree in a thread until the block ends (then it must stop)."""
    from ragloom.settings import resolve_settings

    watched, stop = Watched(), threading.Event()
    settings = resolve_settings(collection="feed", data_dir=data_dir)
    worker = threading.Thread(target=watch_ingest, args=([str(tree)],), kwargs={
        "settings": settings, "on_report": watched.on_report, "stop": stop, **kwargs})
    worker.start()
    try:
        yield watched
    finally:
        stop.set()
        worker.join(timeout=30)
    assert not worker.is_alive()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    for name, text in {"a.md": "Ferries leave at dawn.", "b.md": "Tickets are sold aboard.",
                       "sub/c.md": "The harbour closes in storms."}.items():
        write(root / name, text)
    return root


def test_only_the_paths_fed_are_looked_at(tree: Path, data_dir: Path) -> None:
    kw = {"collection": "feed", "data_dir": data_dir}
    ingest([str(tree)], **kw)
    write(tree / "a.md", "Ferries leave at noon now.")
    write(tree / "b.md", "An edit the feed does not name.")
    fed = ingest([str(tree)], changed=[str(tree / "a.md")], **kw)
    assert changes(fed) == {"a.md": "updated"}
    assert fed.unchanged == []  # nothing else was even stat'ed
    later = ingest([str(tree)], **kw)  # a full listing still catches what a feed missed
    assert changes(later) == {"b.md": "updated"}
    assert_consistent(data_dir, "feed")


def test_fed_deletions_creations_and_directories(tree: Path, tmp_path: Path,
                                                 data_dir: Path) -> None:
    kw = {"collection": "feed", "data_dir": data_dir}
    ingest([str(tree)], **kw)
    (tree / "a.md").unlink()
    (tree / "sub" / "c.md").unlink()
    (tree / "sub").rmdir()
    write(tree / "new" / "d.md", "A new pier opens in May.")
    write(tree / ".hidden" / "e.md", "Hidden notes.")
    outside = write(tmp_path / "elsewhere.md", "Not under the docs.")
    fed = ingest([str(tree)], changed=[str(tree / "a.md"), str(tree / "sub"), str(tree / "new"),
                                       str(tree / ".hidden" / "e.md"), str(outside)], **kw)
    assert changes(fed) == {"a.md": "removed", "c.md": "removed", "d.md": "ingested"}
    assert fed.skipped == {str(outside): "not under any source of this run"}
    state = assert_consistent(data_dir, "feed")
    assert [Path(s).name for s in state["sources"]] == ["b.md", "d.md"]
    full = ingest([str(tree)], **kw)  # the feed left what a full listing finds
    assert set(full.statuses().values()) == {"unchanged"} and len(full.statuses()) == 2


def test_a_fed_link_is_not_followed_out_of_the_tree(tree: Path, tmp_path: Path,
                                                    data_dir: Path) -> None:
    secret = write(tmp_path / "secret.md", "Outside the tree.")
    (tree / "link.md").symlink_to(secret)
    fed = ingest([str(tree)], changed=[str(tree / "link.md")], collection="feed",
                 data_dir=data_dir)
    assert fed.sources == [] and "symbolic link" in fed.skipped[str(tree / "link.md")]


def test_a_feed_cannot_be_combined_with_reindex(tree: Path, data_dir: Path) -> None:
    with pytest.raises(ConfigError, match="reindex"):
        ingest([str(tree)], changed=[], reindex=True, collection="feed", data_dir=data_dir)


def test_cli_reads_the_feed_from_stdin(tree: Path, data_dir: Path) -> None:
    argv = ["ingest", str(tree), "-c", "feed", "--data-dir", str(data_dir), "--json"]
    assert CliRunner().invoke(app, argv).exit_code == 0
    write(tree / "b.md", "Tickets are sold online.")
    result = CliRunner().invoke(app, [*argv, "--changed-from", "-"], input=f"{tree / 'b.md'}\n")
    assert result.exit_code == 0, result.output
    assert [s["status"] for s in json.loads(result.stdout)["sources"]] == ["updated"]
    empty = CliRunner().invoke(app, argv[:-1] + ["--changed-from", "-"], input="\n")
    assert empty.exit_code == 0 and "the change feed named no paths" in empty.stderr


def test_watch_roots(tree: Path) -> None:
    assert watch_roots([str(tree), str(tree / "a.md"), f"{tree}/**/*.md",
                        str(tree / "not-yet.md")]) == [str(tree)]
    with pytest.raises(ConfigError, match="local files"):
        watch_roots(["https://example.org/page"])
    with pytest.raises(ConfigError, match="no such directory"):  # not a watch of some far parent
        watch_roots([str(tree / "gone" / "x.md")])


def test_watch_ignores_what_its_own_runs_write(tree: Path) -> None:
    """A data directory inside the watched tree: the runs' own writes start no run."""
    import time

    with watching(tree, tree / ".ragloom") as watched:
        watched.wait(lambda reports: len(reports) == 1)
        assert watched.reports[0].count("ingested") == 3
        time.sleep(3)  # several debounce and wake periods: each write would have started a run
        assert len(watched.reports) == 1


def test_watch_ingests_what_changes_until_stopped(tree: Path, data_dir: Path) -> None:
    with watching(tree, data_dir) as watched:
        watched.wait(lambda reports: len(reports) == 1)
        assert watched.reports[0].count("ingested") == 3
        write(tree / "b.md", "Tickets are sold at the kiosk.")
        assert watched.first_change(1) == {"b.md": "updated"}
        seen = len(watched.reports)
        write(tree / "a.md.part", "Ferries leave at nine.")  # an editor's atomic save
        (tree / "a.md.part").replace(tree / "a.md")
        assert watched.first_change(seen) == {"a.md": "updated"}
    assert_consistent(data_dir, "feed")


def test_a_fed_undecodable_name_fails_alone_and_urls_are_said_to_wait(
    tree: Path, data_dir: Path
) -> None:
    import os

    weird = os.fsdecode(os.fsencode(str(tree)) + b"/caf\xff.md")
    with open(os.fsencode(weird), "w", encoding="utf-8") as handle:
        handle.write("# Odd name\n\nCobalt.")
    write(tree / "a.md", "Ferries leave at ten.")
    url = "https://docs.example/page"
    fed = ingest([str(tree), url], changed=[weird, str(tree / "a.md")], collection="feed",
                 data_dir=data_dir)
    assert changes(fed) == {"a.md": "ingested", "caf\\xff.md": "failed"}
    assert "not valid UTF-8" in next(s for s in fed.sources if s.status == "failed").errors[0]
    assert "not fetched in a change-fed run" in fed.skipped[url]


def test_a_fed_path_outside_every_source_is_listed_as_skipped_unread(tree: Path, data_dir: Path,
                                                                     tmp_path: Path) -> None:
    """Neither walked nor dropped: an outside directory, and a missing relative path (as `git diff
    --name-only` prints them from another directory), are each said to be outside the run."""
    outside = tmp_path / "outside"
    write(outside / "x.md", "Not part of the docs.")
    kw = {"collection": "feed", "data_dir": data_dir}
    ingest([str(tree)], **kw)
    skipped = ingest([str(tree)], changed=[str(outside), "docs-elsewhere/a.md"], **kw).skipped
    assert skipped.get(str(outside)) == "not under any source of this run"
    assert any(k.endswith("docs-elsewhere/a.md") and v == "not under any source of this run"
               for k, v in skipped.items())
    assert not any(k.endswith("x.md") for k in skipped)  # the outside directory was not walked


def test_a_hard_link_fed_through_two_paths_is_ingested_once(tree: Path, data_dir: Path) -> None:
    """As in a full listing: the second path of one file (device + inode) is skipped as the same
    file, not ingested again — also when the feed names both paths, or a directory of each."""
    (tree / "sub" / "link.md").hardlink_to(tree / "a.md")
    kw = {"collection": "feed", "data_dir": data_dir}
    full = ingest([str(tree)], **kw)
    write(tree / "a.md", "Ferries leave at noon now.")  # edits both names of the file
    fed = ingest([str(tree)], changed=[str(tree / "a.md"), str(tree / "sub")], **kw)
    assert changes(fed) == {"a.md": "updated"}
    assert fed.skipped.get(str(tree / "sub" / "link.md")) == f"same file as {tree / 'a.md'}"
    assert full.skipped.get(str(tree / "sub" / "link.md")) == f"same file as {tree / 'a.md'}"
    assert_consistent(data_dir, "feed")


def test_watch_survives_a_failed_run_and_retries_what_it_owed(
        tree: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that fails (here: another ingest holds the collection, once) goes to on_error; the
    watch goes on and, with no further change, feeds that run's paths again after RETRY_S."""
    import ragloom.runner
    import ragloom.watch
    from ragloom.errors import StoreError

    real = ragloom.runner.ingest
    calls: list[list[str] | None] = []

    def held_once(specs: list[str], **kwargs: object) -> IngestionReport:
        calls.append(kwargs.get("changed"))  # type: ignore[arg-type]
        if len(calls) == 2:
            raise StoreError("another ingest holds this collection", where="lock")
        return real(specs, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ragloom.runner, "ingest", held_once)
    monkeypatch.setattr(ragloom.watch, "RETRY_S", 0.5)
    errors: list[str] = []
    with watching(tree, data_dir, on_error=lambda exc: errors.append(str(exc))) as watched:
        watched.wait(lambda reports: len(reports) == 1)
        write(tree / "b.md", "Tickets are sold at the kiosk.")
        assert watched.first_change(1) == {"b.md": "updated"}
    assert len(errors) == 1 and "another ingest holds" in errors[0]
    assert calls[1] == calls[2] and str(tree / "b.md") in (calls[2] or [])
    assert_consistent(data_dir, "feed")
