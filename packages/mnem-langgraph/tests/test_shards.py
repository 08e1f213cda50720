"""``shard_depth``: one engine store per namespace prefix, every BaseStore operation across them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp

from mnem_adapter_kit import open_store, store_dir_name
from mnem_langgraph import CorruptStoreError, InvalidInputError, InvalidRefError, MnemosyneStore
from mnem_langgraph.shards import UNBORN_AGE

from .support import commits


def shard_folders(path: Path) -> dict[tuple[str, ...], Path]:
    found = {}
    for folder in path.iterdir():
        manifest = folder / "shard.json"
        if manifest.exists():
            found[tuple(json.loads(manifest.read_text())["namespace_prefix"])] = folder
    return found


def test_each_namespace_prefix_gets_an_engine_store_of_its_own(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        store.put(("memories", "u1"), "a", {"v": 1})
        store.put(("memories", "u1", "deep"), "b", {"v": 2})
        store.put(("memories", "u2"), "a", {"v": 3})
        store.put(("short",), "c", {"v": 4})
    folders = shard_folders(tmp_path)
    assert set(folders) == {("memories", "u1"), ("memories", "u2"), ("short",)}
    assert [len(commits(folders[key])) for key in sorted(folders)] == [2, 1, 1]
    assert not (tmp_path / ".mnem").exists()


def test_reads_with_a_shorter_prefix_fan_out_in_one_order(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        for i in range(6):
            store.put(("memories", f"u{i % 3}"), f"k{i}", {"i": i})
        store.put(("other", "x"), "k", {"i": 99})
        found = store.search(("memories",), limit=100)
        order = sorted(found, key=lambda i: (-i.updated_at.timestamp(), i.namespace, i.key))
        assert found == order
        assert sorted(item.value["i"] for item in found) == [0, 1, 2, 3, 4, 5]
        matching = [item for item in found if item.value["i"] >= 1]
        page = store.search(("memories",), filter={"i": {"$gte": 1}}, limit=2, offset=1)
        assert page == matching[1:3]
        assert [item.value["i"] for item in store.search((), limit=1)] == [99]
        assert store.list_namespaces(prefix=("memories",)) == [
            ("memories", "u0"),
            ("memories", "u1"),
            ("memories", "u2"),
        ]
        assert store.list_namespaces(max_depth=1) == [("memories",), ("other",)]
        assert store.get(("memories", "u1"), "k4") is not None
        assert store.get(("memories", "nobody"), "k4") is None
        assert store.search(("memories", "nobody")) == []
    assert set(shard_folders(tmp_path)) == {
        ("memories", "u0"),
        ("memories", "u1"),
        ("memories", "u2"),
        ("other", "x"),
    }


def test_a_batch_across_shards_is_one_commit_per_shard_and_reads_the_state_before_it(
    tmp_path: Path,
) -> None:
    with MnemosyneStore(tmp_path, shard_depth=1) as store:
        store.put(("a",), "k", {"v": "old"})
        got, _, _, found = store.batch(
            [
                GetOp(("a",), "k"),
                PutOp(("a",), "k", {"v": "new"}),
                PutOp(("b",), "k", {"v": "b"}),
                SearchOp(()),
            ]
        )
        assert got is not None
        assert got.value == {"v": "old"}
        assert [item.value for item in found] == [{"v": "old"}]
        assert store.get(("a",), "k").value == {"v": "new"}  # type: ignore[union-attr]
    folders = shard_folders(tmp_path)
    assert len(commits(folders[("a",)])) == 2
    assert len(commits(folders[("b",)])) == 1


def test_another_object_or_process_sees_the_shards_made_elsewhere(tmp_path: Path) -> None:
    with (
        MnemosyneStore(tmp_path, shard_depth=1) as first,
        MnemosyneStore(tmp_path, shard_depth=1) as second,
    ):
        first.put(("a",), "k", {"v": 1})
        assert [item.key for item in second.search(())] == ["k"]
        script = (
            "import sys\n"
            "from mnem_langgraph import MnemosyneStore\n"
            "with MnemosyneStore(sys.argv[1], shard_depth=1) as s:\n"
            "    s.put(('from-elsewhere',), 'k', {'v': 2})\n"
        )
        subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True)
        assert second.list_namespaces() == [("a",), ("from-elsewhere",)]
        assert first.get(("from-elsewhere",), "k") is not None


def test_history_why_and_get_at_work_per_shard(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path, shard_depth=1) as store:
        store.put(("a",), "k", {"v": 1, "_meta": {"source": "first"}})
        store.put(("b",), "k", {"v": 1})
        store.put(("a",), "k", {"v": 2, "_meta": {"source": "second"}})
        log = store.history()
        assert [commit.changes for commit in log] == [
            {(("a",), "k"): "modified"},
            {(("b",), "k"): "added"},
            {(("a",), "k"): "added"},
        ]
        assert store.history(limit=1) == log[:1]
        origin = store.why(("a",), "k")
        assert origin is not None
        assert origin.commit == log[0].id
        assert origin.provenance.source == "second"
        assert store.get_at(("a",), "k", log[2].id).value == {"v": 1}  # type: ignore[union-attr]
        assert store.why(("c",), "k") is None
        with pytest.raises(InvalidRefError):
            store.get_at(("c",), "k", log[0].id)


def test_branches_are_refused_on_a_sharded_store(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path, shard_depth=1) as store:
        with pytest.raises(NotImplementedError, match="unsharded"):
            store.branch("what-if")
        with pytest.raises(NotImplementedError, match="unsharded"):
            store.switch("main")


@pytest.mark.parametrize("depth", [0, -1, 1.5, True, "2"])
def test_a_shard_depth_that_is_not_a_positive_int_is_refused(tmp_path: Path, depth: object) -> None:
    with pytest.raises(InvalidInputError):
        MnemosyneStore(tmp_path, shard_depth=depth)  # type: ignore[arg-type]


def test_a_sharded_root_opened_without_its_depth_is_refused_naming_the_depth(
    tmp_path: Path,
) -> None:
    with MnemosyneStore(tmp_path, shard_depth=2) as sharded:
        sharded.put(("users", "ada"), "city", {"v": "Lisbon"})
    with pytest.raises(InvalidInputError, match="shard_depth=2"):
        MnemosyneStore(tmp_path)
    assert not (tmp_path / ".mnem").exists()


def test_a_plain_store_opened_with_a_depth_is_refused(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path) as plain:
        plain.put(("users", "ada"), "city", {"v": "Lisbon"})
    with pytest.raises(InvalidInputError, match="without shard_depth"):
        MnemosyneStore(tmp_path, shard_depth=2)


def fill_two_shards(root: Path) -> dict[tuple[str, ...], Path]:
    with MnemosyneStore(root, shard_depth=2) as store:
        store.put(("memories", "u1"), "a", {"v": 1})
        store.put(("memories", "u2"), "b", {"v": 2})
    return shard_folders(root)


@pytest.mark.parametrize("damage", ["deleted", "garbled", "another prefix", "not a list"])
def test_a_damaged_shard_manifest_is_corrupt_store_naming_it_never_an_empty_shard(
    tmp_path: Path, damage: str
) -> None:
    folders = fill_two_shards(tmp_path)
    manifest = folders[("memories", "u1")] / "shard.json"
    if damage == "deleted":
        manifest.unlink()
    elif damage == "garbled":
        manifest.write_bytes(b'{"namespace_prefix": ["memo')
    elif damage == "another prefix":
        manifest.write_text(json.dumps({"namespace_prefix": ["memories", "u2"]}))
    else:
        manifest.write_text(json.dumps({"namespace_prefix": "memories"}))
    reads = [
        lambda s: s.get(("memories", "u1"), "a"),
        lambda s: s.search(("memories",)),
        lambda s: s.list_namespaces(),
    ]
    if damage != "deleted":  # a put into the shard writes a missing manifest again, exactly
        reads.append(lambda s: s.put(("memories", "u1"), "c", {"v": 3}))
    for read in reads:
        with (
            MnemosyneStore(tmp_path, shard_depth=2) as store,
            pytest.raises(CorruptStoreError, match=r"shard\.json"),
        ):
            read(store)
    assert len(commits(folders[("memories", "u1")])) == 1


def test_a_put_into_a_shard_whose_manifest_was_deleted_writes_it_again(tmp_path: Path) -> None:
    folders = fill_two_shards(tmp_path)
    (folders[("memories", "u1")] / "shard.json").unlink()
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        store.put(("memories", "u1"), "c", {"v": 3})
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        assert sorted(item.key for item in store.search(("memories",))) == ["a", "b", "c"]


def test_reads_never_create_a_store_in_a_folder_holding_a_manifest(tmp_path: Path) -> None:
    fill_two_shards(tmp_path)
    pending = tmp_path / "pending"
    pending.mkdir()
    (pending / "shard.json").write_text(json.dumps({"namespace_prefix": ["memories", "u9"]}))
    (tmp_path / "unrelated").mkdir()
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        assert [item.key for item in store.search(("memories",))] == ["b", "a"]
        assert store.get(("memories", "u9"), "x") is None
    assert sorted(p.name for p in pending.iterdir()) == ["shard.json"]
    assert list((tmp_path / "unrelated").iterdir()) == []


def unborn_shard(root: Path, prefix: list[str], *, age: float) -> Path:
    """What a shard creator killed before its first commit leaves: manifest, empty store."""
    folder = root / store_dir_name(json.dumps(prefix))
    folder.mkdir()
    (folder / "shard.json").write_text(json.dumps({"namespace_prefix": prefix}))
    with open_store(folder, author="killed").session() as engine:
        assert engine.head_commit() is None
    made = time.time() - age
    os.utime(folder / ".mnem" / "HEAD", (made, made))
    return folder


def test_an_old_empty_shard_store_is_removed_keeping_its_manifest(tmp_path: Path) -> None:
    fill_two_shards(tmp_path)
    old = unborn_shard(tmp_path, ["memories", "u8"], age=UNBORN_AGE + 60)
    young = unborn_shard(tmp_path, ["memories", "u9"], age=5)
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        assert sorted(item.key for item in store.search(("memories",))) == ["a", "b"]
    assert sorted(p.name for p in old.iterdir()) == ["shard.json"]
    assert (young / ".mnem").is_dir()
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        store.put(("memories", "u8"), "c", {"v": 3})
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        assert store.get(("memories", "u8"), "c").value == {"v": 3}
    assert len(commits(old)) == 1


def test_an_old_shard_whose_commit_has_no_change_record_is_kept(tmp_path: Path) -> None:
    folders = fill_two_shards(tmp_path)
    folder = folders[("memories", "u1")]
    (folder / ".mnem" / "adapter-changes").unlink()
    made = time.time() - UNBORN_AGE - 60
    os.utime(folder / ".mnem" / "HEAD", (made, made))
    with MnemosyneStore(tmp_path, shard_depth=2) as store:
        assert store.get(("memories", "u1"), "a") is not None
    assert len(commits(folder)) == 1


def test_an_empty_shard_store_held_by_its_creator_is_kept(tmp_path: Path) -> None:
    fill_two_shards(tmp_path)
    folder = unborn_shard(tmp_path, ["memories", "u8"], age=UNBORN_AGE + 60)
    holder = open_store(folder, author="creator")
    with holder.session():
        script = (
            "from mnem_langgraph import MnemosyneStore\n"
            f"with MnemosyneStore({str(tmp_path)!r}, shard_depth=2, busy_timeout=0.2) as s:\n"
            "    print(len(s.search(('memories', 'u1'))))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        assert done.stdout.split() == ["1"]
    holder.close()
    assert (folder / ".mnem").is_dir()
