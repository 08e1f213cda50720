"""Each contract test can fail: broken adapters fail exactly the tests guarding what they break."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mnem_adapter_kit.testing.contract import AdapterContract, not_applicable, standard_tests

BROKEN = {
    "ReferenceList": set(),
    "SharesIdsAcrossScopes": {
        "test_a_scope_whose_ids_would_pass_the_id_limit_writes_nothing",
        "test_clear_is_a_tombstone_that_history_still_holds",
        "test_adversarial_scopes_never_read_or_clear_each_other",
        "test_two_objects_on_one_path_in_one_process_work_together",
        "test_writers_in_one_process_never_get_busy_and_lose_nothing",
        "test_why_names_the_commit_that_set_each_value",
    },
    "ResetsTheCounterOnClear": {
        "test_clear_is_a_tombstone_that_history_still_holds",
        "test_ids_are_never_reused_after_a_clear",
    },
    "CommitsEachItemOfABatch": {"test_a_batch_is_exactly_one_commit"},
    "ReadsForeignNodes": {
        "test_clear_is_a_tombstone_that_history_still_holds",
        "test_foreign_nodes_are_never_returned_or_cleared",
        "test_adversarial_scopes_never_read_or_clear_each_other",
        "test_two_objects_on_one_path_in_one_process_work_together",
        "test_writers_in_one_process_never_get_busy_and_lose_nothing",
    },
    "PicksIdsOutsideItsTurn": {"test_writers_in_one_process_never_get_busy_and_lose_nothing"},
    "OrdersHistoryByTime": {"test_history_lists_commits_of_one_millisecond_in_parent_order"},
    "AnswersWhyWithHead": {"test_why_names_the_commit_that_set_each_value"},
    "ClearsOnlyTheFirstItem": {
        "test_clear_is_a_tombstone_that_history_still_holds",
        "test_adversarial_scopes_never_read_or_clear_each_other",
    },
    "StagesBeforeValidating": {
        "test_bad_input_is_refused_before_the_store_is_touched",
        "test_a_write_refused_by_the_store_leaves_nothing_staged",
    },
}

CONTRACT_FILE = """
import reference_adapter as ra
from mnem_adapter_kit.testing.contract import AdapterContract

class Harness(ra.ReferenceHarness):
    adapter_class = ra.{variant}

class TestContract(AdapterContract):
    harness = Harness()
"""


@pytest.fixture(autouse=True)
def _quiet_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def failed_tests(pytester: pytest.Pytester, variant: str, *args: str) -> set[str]:
    pytester.makepyfile(test_contract=CONTRACT_FILE.format(variant=variant))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", *args)
    return {
        line.split("::")[-1].split(" ")[0] for line in result.outlines if line.startswith("FAILED")
    }


@pytest.mark.parametrize("variant", sorted(BROKEN))
def test_the_contract_fails_exactly_where_an_adapter_is_broken(
    pytester: pytest.Pytester, variant: str
) -> None:
    assert failed_tests(pytester, variant, "-rf") == BROKEN[variant]


def test_leaking_raw_engine_errors_fails_the_taxonomy_tests(pytester: pytest.Pytester) -> None:
    failed = failed_tests(pytester, "LeaksEngineErrors", "-rf", "-k", "garbled or busy or missing")
    assert {
        "test_a_garbled_store_is_corrupt_store",
        "test_a_store_locked_by_another_process_is_busy",
    } <= failed


BYPASSES = {
    "a no-op override and an override of the guard itself": """
class TestContract(AdapterContract):
    harness = ra.ReferenceHarness()

    def test_no_standard_test_is_silently_overridden(self):
        pass

    def test_one_write_call_is_exactly_one_commit(self):
        pass
""",
    "an exemption attribute set by hand": """
class TestContract(AdapterContract):
    harness = ra.ReferenceHarness()

    def test_one_write_call_is_exactly_one_commit(self):
        pass

    test_one_write_call_is_exactly_one_commit.__contract_not_applicable__ = "trust me"
""",
    "the whole class marked xfail": """
@pytest.mark.xfail(reason="known broken")
class TestContract(AdapterContract):
    harness = ra.BROKEN_HARNESS
""",
    "the module marked skip": """
pytestmark = pytest.mark.skip(reason="later")

class TestContract(AdapterContract):
    harness = ra.ReferenceHarness()
""",
    "the inherited test re-marked skip": """
AdapterContract.test_one_write_call_is_exactly_one_commit = pytest.mark.skip(
    AdapterContract.test_one_write_call_is_exactly_one_commit
)

class TestContract(AdapterContract):
    harness = ra.ReferenceHarness()
""",
    "a subclass marked skipif": """
class TestContract(AdapterContract):
    harness = ra.ReferenceHarness()

    test_one_write_call_is_exactly_one_commit = pytest.mark.skipif(True, reason="no")(
        AdapterContract.test_one_write_call_is_exactly_one_commit
    )
""",
}


@pytest.fixture
def _contract_restored() -> Iterator[None]:
    """Undo what a bypass does to the shared contract class in this process."""
    standard = dict(vars(AdapterContract))
    yield
    for name, value in standard.items():
        if name.startswith("test_"):
            setattr(AdapterContract, name, value)
            if hasattr(value, "pytestmark"):
                del value.pytestmark


@pytest.mark.usefixtures("_contract_restored")
@pytest.mark.parametrize("how", sorted(BYPASSES))
def test_every_way_of_bypassing_the_contract_stops_the_run(
    pytester: pytest.Pytester, how: str
) -> None:
    header = (
        "import pytest\n"
        "import reference_adapter as ra\n"
        "from mnem_adapter_kit.testing.contract import AdapterContract\n"
    )
    pytester.makepyfile(test_contract=header + BYPASSES[how])
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the adapter contract is bypassed*"])


def test_a_test_marked_not_applicable_with_a_reason_shows_as_a_skip(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_contract="""
import reference_adapter as ra
from mnem_adapter_kit.testing.contract import AdapterContract, not_applicable

class TestContract(AdapterContract):
    harness = ra.ReferenceHarness()

    @not_applicable("this adapter has no clear")
    def test_clearing_nothing_makes_no_commit(self, store):
        raise AssertionError("never runs")
"""
    )
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-rs", "-k", "overridden or clearing_nothing"
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*not applicable: this adapter has no clear*"])


def test_the_guard_itself_cannot_be_marked_not_applicable() -> None:
    with pytest.raises(ValueError, match="guard"):
        not_applicable("no")(AdapterContract.test_no_standard_test_is_silently_overridden)


def test_every_standard_test_is_known_to_the_self_test() -> None:
    guarded = set().union(*BROKEN.values()) | {
        "test_a_garbled_store_is_corrupt_store",
        "test_a_store_locked_by_another_process_is_busy",
        "test_no_standard_test_is_silently_overridden",
    }
    assert guarded <= set(standard_tests())
