"""A scope mirror always equals the scope's committed state, however HEAD moved."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import mnem

from mnem_adapter_kit import Scope, ScopeMirror, attach, write_commit
from mnem_adapter_kit.testing.stores import stage_foreign, write_foreign


class Recorder:
    """A listener that rebuilds the mirror's contents from what it hears."""

    def __init__(self) -> None:
        self.seen: dict[str, object] = {}
        self.resets = 0

    def reset(self, nodes: Mapping[str, mnem.MemoryNode]) -> None:
        self.resets += 1
        self.seen = {k: v.content for k, v in nodes.items()}

    def changed(self, node_id: str, node: mnem.MemoryNode | None) -> None:
        if node is None:
            self.seen.pop(node_id, None)
        else:
            self.seen[node_id] = node.content


def test_the_mirror_follows_every_way_head_can_move(tmp_path: Path) -> None:
    scope = Scope.of("mine")
    recorder = Recorder()
    mirror = ScopeMirror(scope.owns, recorder)
    client = attach(tmp_path)

    def check() -> None:
        with client.session() as lease:
            nodes = mirror.sync(lease)
            head = lease.head_commit()
            state = lease.state_at(head) if head else {}
            truth = {k: v.content for k, v in state.items() if scope.owns(k)}
        assert {k: v.content for k, v in nodes.items()} == truth
        assert recorder.seen == truth

    check()
    write_foreign(tmp_path, {"mine:0000000001": "a", "other:0000000001": "x"})
    check()
    for i in range(3):
        write_foreign(tmp_path, {f"other:{i + 2:010d}": "y"})
    check()
    write_foreign(tmp_path, {"mine:0000000002": "b", "other:0000000009": "z"})
    check()
    with client.session() as lease:
        written = write_commit(
            lease, lambda s: s.remove("mine:0000000001"), message="m", author="t"
        )
        assert written is not None
        mirror.apply(written)
    check()
    with client.session() as lease:
        lease.new_branch("side")
        lease.checkout("side")
    write_foreign(tmp_path, {"mine:0000000003": "on side"})
    check()
    with client.session() as lease:
        lease.checkout("main")
    check()
    stage_foreign(tmp_path, "mine:0000000004", "staged, never served")
    check()
    client.close()
    assert recorder.resets == 2  # the empty store, then its first commit; diffs after that
