"""The history view's own parts, on raw-engine stores: readers, timeline, text, page, command.

Nodes here use an adapter family no installed adapter claims (``@other:...``), so
they read as foreign whichever adapters are installed.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import mnem
import pytest

from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import InvalidRefError
from mnem_adapter_kit.formats import Reading
from mnem_adapter_kit.testing.stores import commits, write_foreign
from mnem_adapter_kit.view import _cli as cli
from mnem_adapter_kit.view import _page as page
from mnem_adapter_kit.view import _readers as readers
from mnem_adapter_kit.view import _text as text
from mnem_adapter_kit.view import _timeline as timeline


def raw_store(path: Path) -> list[str]:
    """Three commits of foreign nodes: add two, change one, remove the other."""
    return [
        write_foreign(path, {"@other:a:1": {"v": 1}, "@other:a:2": "two"}),
        write_foreign(path, {"@other:a:1": {"v": 2}}),
        remove(path, "@other:a:2"),
    ]


def remove(path: Path, node_id: str) -> str:
    client = open_store(path, author="t")
    try:
        with client.session() as engine:
            engine.rm(node_id)
            return engine.commit("remove", author="raw-engine")
    finally:
        client.close()


def run(path: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    saved = sys.stdout
    sys.stdout = out
    try:
        status = cli.main(["--store", str(path), *args])
    finally:
        sys.stdout = saved
    return status, out.getvalue()


# --- readers ------------------------------------------------------------------------------


def test_the_first_reader_to_claim_a_node_reads_it_and_a_failing_reader_claims_nothing() -> None:
    def broken(node: mnem.MemoryNode) -> Reading | None:
        raise RuntimeError("boom")

    def mine(node: mnem.MemoryNode) -> Reading | None:
        return Reading(("s",), "k", "mine", node.content) if node.id.startswith("m") else None

    chosen = readers.Readers.of({"a-broken": broken, "b-mine": mine})

    assert chosen.read(mnem.MemoryNode("m1", 1)) == ("b-mine", Reading(("s",), "k", "mine", 1))
    assert chosen.read(mnem.MemoryNode("x1", 2)) == ("foreign", Reading((), "x1", "x1", 2))


@pytest.mark.parametrize(
    ("given", "scope"),
    [
        ("notes", ("notes",)),
        ('["memories", "ada"]', ("memories", "ada")),
        ("[not json", ("[not json",)),
        ("[]", ("[]",)),
        ("a:b", ("a:b",)),
    ],
)
def test_a_scope_is_one_label_or_a_json_array_of_labels(given: str, scope: tuple[str, ...]) -> None:
    assert readers.parse_scope(given) == scope


# --- text and page --------------------------------------------------------------------------


def test_text_escapes_control_characters_and_keeps_newlines_only_where_asked() -> None:
    assert text.clean("a\x1b[2Jb\u2028c") == "a\\x1b[2Jb\\u2028c"
    assert text.clean("a\nb", newlines=True) == "a\nb"
    assert text.clean("a\nb") == "a\\nb"
    assert text.summary("x" * 100, width=10) == '"xxxxxxxx…'
    assert text.summary({"k": "\x07"}) == '{"k":"\\u0007"}'


def test_embedded_json_cannot_close_the_script_element() -> None:
    hostile = {"v": "</script><!-- <script>alert(1)</script> & \u2028"}

    embedded = page.embed_json(hostile)

    assert not re.search(r"[<>&\u2028]", embedded)
    assert json.loads(embedded) == hostile


def test_the_page_template_fills_every_marker_once_and_leaves_data_markers_alone() -> None:
    html = page.render({"v": "{{script}} {{data}}"}, "title {{style}}")

    assert "{{" not in html.replace("{{script}} {{data}}", "").replace("title {{style}}", "")
    assert html.count("<script>") == 1
    assert "title {{style}}" in html


# --- timeline and the command ----------------------------------------------------------


def test_resolve_steps_back_along_first_parents(tmp_path: Path) -> None:
    made = raw_store(tmp_path)
    client = open_store(tmp_path, create=False, author="t")
    try:
        with client.session() as engine:
            assert timeline.resolve(engine, "HEAD") == made[2]
            assert timeline.resolve(engine, "HEAD~2") == made[0]
            assert timeline.resolve(engine, made[1][:8] + "~1") == made[0]
            assert timeline.resolve(engine, "main~1") == made[1]
            with pytest.raises(InvalidRefError):
                timeline.resolve(engine, "HEAD~3")
            with pytest.raises(InvalidRefError):
                timeline.resolve(engine, "HEAD~x")
    finally:
        client.close()


def test_log_show_and_diff_of_foreign_nodes(tmp_path: Path) -> None:
    made = raw_store(tmp_path)

    status, log = run(tmp_path, "log")
    assert status == 0
    assert [line.split()[1] for line in log.splitlines() if line.startswith("commit ")] == [
        c[:12] for c in reversed(made)
    ]
    assert "  - foreign    @other:a:2" in log
    assert '  ~ foreign    @other:a:1  {"v":2}' in log

    status, shown = run(tmp_path, "show", "@other:a:2", "--json")
    assert status == 0
    assert json.loads(shown)["removed_by"]["id"] == made[2]

    status, diff = run(tmp_path, "diff", made[0], made[2], "--json")
    assert status == 0
    assert {c["node_id"]: c["kind"] for c in json.loads(diff)["changes"]} == {
        "@other:a:1": "modified",
        "@other:a:2": "removed",
    }


def test_the_page_names_the_commit_a_merged_value_came_from(tmp_path: Path) -> None:
    base = write_foreign(tmp_path, {"@other:a:1": "base"})
    client = open_store(tmp_path, author="t")
    try:
        with client.session() as engine:
            engine.new_branch("side")
            engine.checkout("side")
            engine.add("@other:a:1", "from the side branch")
            side = engine.commit("on the side", author="raw-engine")
            engine.checkout("main")
            engine.add("@other:a:2", "main moves on")
            engine.commit("on main", author="raw-engine")
            assert engine.merge("side", message="merge side", author="raw-engine").ok
        chosen = readers.Readers.of({})
        head = timeline.head_of(client)
        steps = list(timeline.walk_steps(client, chosen, head.chain))
        origins = cli.merged_origins(client, steps)
    finally:
        client.close()

    data = page.page_data(str(tmp_path), head, steps, origins, ["foreign"])

    assert base != side
    assert {item["id"]: item["origin"] for item in data["items"]} == {
        "@other:a:1": side,
        "@other:a:2": None,
    }
    assert side in data["other_commits"]
    assert [c["id"] for c in data["commits"]] == [c.id for c in commits(tmp_path)]


def test_an_empty_store_has_an_empty_history(tmp_path: Path) -> None:
    mnem.init(tmp_path)

    assert run(tmp_path, "log") == (0, "no commits\n")
    status, _ = run(tmp_path, "html", "--out", str(tmp_path / "page.html"))
    assert status == 0
    assert '"commits":[]' in (tmp_path / "page.html").read_text()
