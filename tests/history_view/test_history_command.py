"""``mnem-history log | show | diff | html`` on stores every adapter wrote, read by the view alone.

Each test runs the command in a new process, as a user would, against a real
store in a temporary folder (see ``conftest.py`` for what the store holds).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import mnem
import pytest

from mnem_adapter_kit.testing.stores import commits, lock_held_elsewhere, staging
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore

History = Any
MixedStore = Any

ODD_MEMORY = 'team:ü/<b>"50%"_x'
ODD_NAMESPACE = ("a:b", "%25", "<img src=x onerror=alert(1)>")
SCRIPT_VALUE = "</script><script>alert('boom')</script>"


def labels(step: dict[str, Any]) -> list[str]:
    return [(c["after"] or c["before"])["label"] for c in step["changes"]]


def adapters(step: dict[str, Any]) -> set[str]:
    return {(c["after"] or c["before"])["adapter"] for c in step["changes"]}


def fingerprint(path: Path) -> str:
    return hashlib.sha256((path / ".mnem" / "store.redb").read_bytes()).hexdigest()


# --- log ------------------------------------------------------------------------------


def test_log_lists_every_commit_newest_first_with_items_named_as_each_adapter_does(
    mixed: MixedStore, history_json: History
) -> None:
    steps = history_json(mixed.path, "log")

    assert [s["id"] for s in steps] == [c.id for c in commits(mixed.path)]
    by_adapter = {a for s in steps for a in adapters(s)}
    assert by_adapter == {"autogen", "langgraph", "mcp", "openai-agents", "foreign"}
    every = {label for s in steps for label in labels(s)}
    assert "notes #1" in every
    assert "travel #1" in every, "Agent Framework's memory item, in the list memory format"
    assert "chat-1 #1" in every
    assert f"{ODD_MEMORY} #1" in every
    assert "('a:b','%25','<img src=x onerror=alert(1)>')/k" in every
    assert "user/city" in every
    assert "@crewai:crew:1" in every
    first = steps[-1]["changes"][0]["after"]
    assert first["value"] == "the user is Ada"
    assert first["details"]["mime_type"] == "text/plain"


def test_log_hides_sequence_marks_unless_all_is_given(
    mixed: MixedStore, history_json: History
) -> None:
    plain = history_json(mixed.path, "log")
    everything = history_json(mixed.path, "log", "--all")

    assert not [c for s in plain for c in s["changes"] if (c["after"] or c["before"])["internal"]]
    marks = [c for s in everything for c in s["changes"] if (c["after"] or c["before"])["internal"]]
    assert marks
    assert {c["node_id"] for c in marks} >= {"notes:_seq"}


def test_log_by_scope_keeps_whole_labels_apart(mixed: MixedStore, history_json: History) -> None:
    notes = history_json(mixed.path, "log", "--scope", "notes")
    odd = history_json(mixed.path, "log", "--scope", ODD_MEMORY)
    colon = history_json(mixed.path, "log", "--scope", "a:b")
    plain = history_json(mixed.path, "log", "--scope", '["a","b"]')
    just_a = history_json(mixed.path, "log", "--scope", "a")

    assert {label for s in notes for label in labels(s)} == {
        "notes #1",
        "notes #2",
        "notes #3",
        "notes #4",
    }
    assert {label for s in odd for label in labels(s)} == {f"{ODD_MEMORY} #1"}
    assert {tuple((c["after"] or c["before"])["scope"]) for s in colon for c in s["changes"]} == {
        ODD_NAMESPACE
    }
    assert [len(s["changes"]) for s in colon] == [1, 1, 1, 1]
    assert {tuple((c["after"] or c["before"])["scope"]) for s in plain for c in s["changes"]} == {
        ("a", "b")
    }
    assert just_a == plain, "a scope matches whole labels: 'a' is not a prefix of 'a:b'"


def test_log_by_adapter_and_limit(mixed: MixedStore, history_json: History) -> None:
    mcp = history_json(mixed.path, "log", "--adapter", "mcp")
    newest_two = history_json(mixed.path, "log", "-n", "2", "--adapter", "mcp")
    foreign = history_json(mixed.path, "log", "--adapter", "foreign")

    assert all(adapters(s) == {"mcp"} for s in mcp)
    assert newest_two == mcp[:2]
    assert [labels(s) for s in foreign] == [["@crewai:crew:1"]]


def test_log_as_text_escapes_terminal_control_characters(
    mixed: MixedStore, history: History
) -> None:
    done = history(mixed.path, "log")

    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "\\u001b[2Jwiped" in done.stdout
    assert f"+ autogen    {ODD_MEMORY} #1" in done.stdout
    assert "- mcp        user/name" in done.stdout


# --- show -----------------------------------------------------------------------------


async def test_show_gives_value_origin_and_provenance_as_the_engine_blames_them(
    mixed: MixedStore, history_json: History
) -> None:
    shown = history_json(mixed.path, "show", "user/city")

    assert shown["current"]["value"] == "Paris"
    assert shown["origin"]["id"] == mixed.marks["revised"]
    assert shown["origin"]["message"] == "the user corrected me"
    assert shown["origin"]["provenance"] == {"source": "user", "note": "said so"}
    assert [h["kind"] for h in shown["history"]] == ["modified", "added"]
    assert shown["history"][1]["change"]["after"]["value"] == "Lyon"


async def test_show_an_item_cleared_then_the_one_added_after_it(
    mixed: MixedStore, history_json: History
) -> None:
    gone = history_json(mixed.path, "show", "notes:0000000001")
    named = history_json(mixed.path, "show", "notes #1")
    memory = MnemosyneMemory("notes", mixed.path)
    items = await memory.items()
    origin = await memory.why(items[0].id)
    await memory.close()
    again = history_json(mixed.path, "show", items[0].id)

    assert named["node_id"] == "notes #1", "a node id is taken before any label"
    assert named["current"]["adapter"] == "mcp"
    assert gone["current"] is None
    assert gone["removed_by"]["id"] == mixed.marks["cleared"]
    assert gone["latest"]["value"] == "the user is Ada"
    assert [h["kind"] for h in gone["history"]] == ["removed", "added"]
    assert again["current"]["value"] == "the user eats fish now"
    assert again["current"]["key"] == "3", "sequence numbers go on after a clear"
    assert again["origin"]["id"] == origin.commit


def test_show_a_langgraph_item_deleted_and_put_again(
    mixed: MixedStore, history_json: History
) -> None:
    shown = history_json(mixed.path, "show", "('a:b','%25','<img src=x onerror=alert(1)>')/k")

    assert shown["current"]["value"] == {"fact": "third"}
    assert shown["current"]["scope"] == list(ODD_NAMESPACE)
    assert shown["origin"]["provenance"] == {"source": "thread t2"}
    assert [h["kind"] for h in shown["history"]] == ["added", "removed", "modified", "added"]
    assert shown["history"][1]["id"] == mixed.marks["deleted"]


def test_show_text_names_the_item_and_its_origin(mixed: MixedStore, history: History) -> None:
    done = history(mixed.path, "show", "user/city")

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "user/city"
    assert any(line.split() == ["adapter", "mcp"] for line in lines)
    assert any(
        line.startswith("  origin      commit " + mixed.marks["revised"][:12]) for line in lines
    )
    assert 'source="user", note="said so"' in done.stdout


def test_show_refuses_an_unknown_or_ambiguous_item(mixed: MixedStore, history: History) -> None:
    unknown = history(mixed.path, "show", "no such thing")
    foreign = history(mixed.path, "show", "@crewai:crew:1")

    assert unknown.returncode == 1
    assert "no item 'no such thing'" in unknown.stderr
    assert foreign.returncode == 0
    assert "adapter     foreign" in foreign.stdout


# --- diff -----------------------------------------------------------------------------


def test_diff_across_a_clear_shows_each_item_removed_and_added(
    mixed: MixedStore, history_json: History
) -> None:
    diff = history_json(
        mixed.path, "diff", mixed.marks["before_clear"][:10], "HEAD", "--scope", "notes"
    )

    kinds = {c["node_id"]: c["kind"] for c in diff["changes"]}
    assert kinds == {
        "notes:0000000001": "removed",
        "notes:0000000002": "removed",
        "notes:0000000003": "added",
        "notes:0000000004": "added",
    }
    added = next(c for c in diff["changes"] if c["node_id"] == "notes:0000000004")
    assert added["after"]["value"] == {"diet": "pescatarian", "since": 2026}


def test_diff_accepts_head_with_steps_back_and_branch_names(
    mixed: MixedStore, history_json: History
) -> None:
    chain = commits(mixed.path)
    one_back = history_json(mixed.path, "diff", "HEAD~1", "main")

    assert one_back["from"] == chain[1].id
    assert one_back["to"] == chain[0].id
    assert [c["node_id"] for c in one_back["changes"]] == ["@crewai:crew:1"]
    assert one_back["changes"][0]["after"]["adapter"] == "foreign"


def test_diff_of_unknown_commits_is_an_invalid_ref(mixed: MixedStore, history: History) -> None:
    done = history(mixed.path, "diff", "ffffffff", "HEAD")
    too_far = history(mixed.path, "diff", "HEAD~999", "HEAD")

    assert done.returncode == 1
    assert "[invalid_ref]" in done.stderr
    assert too_far.returncode == 1
    assert "beyond the first commit" in too_far.stderr


def test_diff_as_text(mixed: MixedStore, history: History) -> None:
    done = history(mixed.path, "diff", mixed.marks["revised"], "HEAD")

    assert done.returncode == 0, done.stderr
    assert re.search(r"^diff [0-9a-f]{12}\.\.[0-9a-f]{12}: 1 added$", done.stdout, re.M)
    assert "+ foreign  @crewai:crew:1" in done.stdout


# --- html -----------------------------------------------------------------------------


def embedded(page: str) -> Any:
    found = re.search(
        r'<script type="application/json" id="history-data">(.*?)</script>', page, re.S
    )
    assert found is not None
    return json.loads(found.group(1))


def test_html_is_one_self_contained_file_holding_every_commit(
    mixed: MixedStore, history: History, tmp_path: Path
) -> None:
    out = tmp_path / "page.html"
    done = history(mixed.path, "html", "--out", str(out))

    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    data = embedded(page)
    assert [c["id"] for c in data["commits"]] == [c.id for c in commits(mixed.path)]
    assert not re.search(
        r"""(src|href)\s*=|<link|@import|url\(|https?://""",
        page.split('<script type="application/json"')[0],
    )
    assert "default-src 'none'" in page
    assert SCRIPT_VALUE not in page, "stored markup never appears raw in the page"
    assert {v["adapter"] for v in data["versions"]} == {
        "autogen",
        "langgraph",
        "mcp",
        "openai-agents",
        "foreign",
    }
    values = [v["value"] for v in data["versions"]]
    assert SCRIPT_VALUE in values


def test_html_with_a_scope_holds_only_that_scope(
    mixed: MixedStore, history: History, tmp_path: Path
) -> None:
    out = tmp_path / "notes.html"
    done = history(mixed.path, "html", "--out", str(out), "--scope", "notes")

    assert done.returncode == 0, done.stderr
    data = embedded(out.read_text(encoding="utf-8"))
    assert {v["label"] for v in data["versions"]} == {
        "notes #1",
        "notes #2",
        "notes #3",
        "notes #4",
    }
    assert len(data["commits"]) == 5


# --- read-only, polite ----------------------------------------------------------------


def test_the_command_never_writes_the_store(
    mixed: MixedStore, history: History, tmp_path: Path
) -> None:
    before = (fingerprint(mixed.path), [c.id for c in commits(mixed.path)], staging(mixed.path))
    for args in (
        ["log"],
        ["show", "user/city"],
        ["show", "notes #1"],
        ["diff", "HEAD~3", "HEAD"],
        ["html", "--out", str(tmp_path / "p.html")],
    ):
        assert history(mixed.path, *args).returncode == 0
    after = (fingerprint(mixed.path), [c.id for c in commits(mixed.path)], staging(mixed.path))

    assert after == before


def test_the_command_waits_for_another_process_then_reads(
    mixed: MixedStore, history: History
) -> None:
    command = [sys.executable, "-m", "mnem_adapter_kit.view", "--store", str(mixed.path)]
    with lock_held_elsewhere(mixed.path):
        busy = history(mixed.path, "--busy-timeout", "0.3", "log", "-n", "1")
        waiting = subprocess.Popen(
            [*command, "--busy-timeout", "30", "log", "-n", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.5)
        assert waiting.poll() is None, "it waits while another process holds the store"
    out, err = waiting.communicate(timeout=60)

    assert busy.returncode == 1
    assert "[busy]" in busy.stderr
    assert "another process held the store's lock" in busy.stderr
    assert "raise --busy-timeout" in busy.stderr
    assert waiting.returncode == 0, err
    assert commits(mixed.path)[0].id[:12] in out


def test_no_store_says_so_and_points_at_stores_below(tmp_path: Path, history: History) -> None:
    for name in ("alpha", "beta"):
        mnem.init(tmp_path / name)
    done = history(tmp_path, "log")

    assert done.returncode == 1
    assert "[no_store]" in done.stderr
    assert "Point --store at the directory holding the store's .mnem/." in done.stderr
    assert "create=True" not in done.stderr, "advice in the command's flags, not Python's"
    assert str(tmp_path / "alpha") in done.stderr
    assert not (tmp_path / ".mnem").exists(), "looking never creates a store"


def test_show_refuses_a_label_two_items_share_and_names_both(
    tmp_path: Path, history: History
) -> None:
    store = tmp_path / "store"
    with MnemosyneStore(store) as graph:
        graph.put(("ns",), "a\n", {"v": "a newline key, labelled with its repr"})
        graph.put(("ns",), "'a\\n'", {"v": "a key that is that repr"})

    done = history(store, "show", "('ns',)/'a\\n'")

    assert done.returncode == 1
    assert "names 2 items; give a node id" in done.stderr
    assert "'@langgraph:ns:a\\n'" in done.stderr


def test_a_store_on_a_read_only_mount_is_read_from_a_private_copy(
    mixed: MixedStore, tmp_path: Path
) -> None:
    mount = tmp_path / "mounted"
    mount.mkdir()
    if (
        not shutil.which("unshare")
        or subprocess.run(
            ["unshare", "-m", "mount", "--bind", "-o", "ro", str(mixed.path), str(mount)],
            capture_output=True,
        ).returncode
    ):
        pytest.skip("no private mount namespace here (needs root)")
    before = fingerprint(mixed.path)
    view = [sys.executable, "-m", "mnem_adapter_kit.view", "--store", str(mount)]
    script = (
        f"mount --bind -o ro {shlex.quote(str(mixed.path))} {shlex.quote(str(mount))} && "
        f"{shlex.join([*view, 'log', '--json'])} && "
        f"{shlex.join([*view, 'html', '--out', str(tmp_path / 'page.html')])}"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    assert "cannot be written here; reading a private copy of its store" in done.stderr
    steps = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [s["id"] for s in steps] == [c.id for c in commits(mixed.path)]
    assert "Memory history: mounted" in (tmp_path / "page.html").read_text()
    assert fingerprint(mixed.path) == before
    assert not any(Path(tempfile.gettempdir()).glob("mnem-history-*")), "the copy is removed"
