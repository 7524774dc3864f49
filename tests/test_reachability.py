"""Code that never runs (flake8_hermetic.facts.reachability), as data in, data
out, and the findings it drops through a real flake8 run."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from flake8_hermetic.facts.reachability import Collection, matches, never_runs
from tests.helpers import codes_by_line, flake8, write_tree


def dead_lines(source: str, collection: Collection = Collection()) -> list[int]:
    """The lines of ``source`` marked ``# dead`` or not, as the fact sees them:
    the numbers of the lines whose first character never runs."""
    text = textwrap.dedent(source)
    found = never_runs(ast.parse(text), collection)
    return [
        number for number, line in enumerate(text.splitlines(), 1)
        if line.strip() and found.why(number, len(line) - len(line.lstrip())) is not None
    ]


def marked(source: str) -> list[int]:
    text = textwrap.dedent(source)
    return [number for number, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("# dead")]


DEAD_BRANCHES = """
    import sys
    import six
    from typing import TYPE_CHECKING
    PY2 = sys.version_info[0] == 2
    if TYPE_CHECKING:
        a = 1  # dead
    if False:
        b = 1  # dead
    if 0:
        b = 2  # dead
    if sys.version_info < (3, 0):
        c = 1  # dead
    else:
        c = 2
    if sys.version_info >= (3, 10):
        d = 1
    else:
        d = 2  # dead
    if (3, 10) > sys.version_info:
        d = 3  # dead
    if sys.version_info[:2] < (3, 12):
        e = 1
    if sys.version_info >= (3, 12):
        e = 2
    if sys.version_info.major == 2 or six.PY2:
        f = 1  # dead
    if PY2:
        g = 1  # dead
    if sys.version_info[1] >= 11:
        h = 1
    if not TYPE_CHECKING:
        i = 1
    else:
        i = 2  # dead
    while False:
        j = 1  # dead
    if __name__ == "__main__":
        k = 1  # dead
"""


def test_dead_branches_only_where_every_supported_python_agrees():
    assert dead_lines(DEAD_BRANCHES) == marked(DEAD_BRANCHES)


def test_a_name_bound_twice_is_not_a_constant():
    source = """
        import sys
        PY2 = sys.version_info[0] == 2
        PY2 = load()
        if PY2:
            a = 1
    """
    assert dead_lines(source) == []


def test_main_guard_runs_in_a_script():
    source = """
        if __name__ == "__main__":
            main()
    """
    assert dead_lines(source, Collection(imported=False)) == []
    assert dead_lines(source) == [3]


ENDINGS = """
    import pytest
    def test_return():
        return
        a = 1  # dead
    def test_skip():
        if x:
            pytest.skip("no")
            b = 1  # dead
        b = 2
    def test_raise():
        for item in items:
            raise ValueError(item)
            c = 1  # dead
        try:
            continue_here()
        finally:
            c = 2
    class TestCase:
        def test_skip_test(self):
            self.skipTest("no")
            d = 1  # dead
            d = 2  # dead
"""


def test_after_an_ending_statement_in_the_same_block():
    assert dead_lines(ENDINGS) == marked(ENDINGS)


UNCOLLECTED = """
    import threading
    import unittest
    import pytest
    from helpers import BaseSuite

    class Helper:
        def make(self):
            a = 1  # dead

    class Used:
        def __init__(self):
            b = 1
        def build(self):
            b = 2
        def on_event(self):
            b = 3  # a library the instance is handed to may call it

    class Mixin:
        def test_shared(self):
            c = 1
        def _only_from_dead(self):
            c = 2  # dead

    class TestCollected(Mixin):
        def test_one(self):
            Used().build()
        def helper_called(self):
            d = 1
        def test_two(self):
            self.helper_called()
        def never_called(self):
            d = 2  # dead
            self._only_from_dead()  # dead
        @pytest.fixture
        def resource(self):
            d = 3
        def setup_method(self):
            d = 4

    class TestHandsItselfOut:
        def test_register(self):
            register(handler=self)
        def on_event(self):
            d = 5

    class TestWithInit:
        def __init__(self):
            e = 1  # dead
        def test_never_collected(self):
            e = 2  # dead

    class TestNotATest:
        __test__ = False
        def test_flagged_off(self):
            f = 1  # dead

    class Case(unittest.TestCase):
        def setUp(self):
            g = 1
        def test_it(self):
            def local_used():
                g = 2
            def local_unused():
                g = 3  # dead
            local_used()
        def helper(self):
            g = 4  # dead

    class FromElsewhere(BaseSuite):
        def hook(self):
            h = 1

    class Runner(threading.Thread):
        def run(self):
            i = 1  # dead

    class Outer:
        class Inner:
            def helper(self):
                j = 1

    def module_helper():
        k = 1

    def test_named_by_string():
        getattr(Used(), "build")
"""


def test_uncollected_methods_and_unused_classes():
    assert dead_lines(UNCOLLECTED) == marked(UNCOLLECTED)


def test_python_classes_and_python_functions_decide():
    source = """
        class CheckThings:
            def check_one(self):
                a = 1
            def test_one(self):
                a = 2  # dead
        class TestThings:
            def test_one(self):
                b = 1  # dead
    """
    collection = Collection(python_classes=("Check*",), python_functions=("check_",))
    assert dead_lines(source, collection) == marked(source)
    assert matches("CheckThings", ("Check*",)) and matches("check_one", ("check_",))
    assert not matches("TestThings", ("Check*",))


def test_a_module_pytest_does_not_collect_keeps_its_classes():
    source = """
        class Helper:
            def make(self):
                a = 1
            def other(self):
                def local():
                    a = 2  # dead
    """
    assert dead_lines(source, Collection(collected=False)) == marked(source)


FILE_WITH_DEAD_CODE = """
    import os
    import tempfile
    import time
    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        WORK = tempfile.mkdtemp()

    class Helper:
        def work(self):
            time.sleep(1)

    class TestIt:
        def test_run(self):
            os.environ["MODE"] = "x"
            return
            os.environ["MODE"] = "y"

        def check_run(self):
            os.environ["MODE"] = "z"

    def test_design():
        pass
"""


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param("", [16], id="defaults"),
        pytest.param("[tool:pytest]\npython_functions = check_\n", [21], id="python_functions"),
    ],
)
def test_flake8_drops_findings_in_code_that_never_runs(tmp_path: Path, config: str, expected: list[int]):
    write_tree(tmp_path, {"tests/test_it.py": FILE_WITH_DEAD_CODE, "setup.cfg": config})
    result = flake8(["--select=HRM101,HRM107,HRM201", "--hermetic-no-baseline", "tests/test_it.py"], cwd=tmp_path)
    assert result.stderr == ""
    assert [line for _, line, _ in codes_by_line(result.stdout)] == expected


def test_rules_about_how_a_test_is_written_still_judge_dead_code(tmp_path: Path):
    write_tree(tmp_path, {"tests/test_it.py": """
        class TestWithInit:
            def __init__(self):
                self.cases = range(3)

            def test_like(self):
                for x in (1, 2, 3):
                    assert x in self.cases
    """})
    result = flake8(["--select=HRM502", "--hermetic-no-baseline", "tests/test_it.py"], cwd=tmp_path)
    assert [code for _, _, code in codes_by_line(result.stdout)] == ["HRM502"]
