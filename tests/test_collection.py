"""The HRM4xx family where an annotated fixture cannot show it: the size
folding of HRM401 as a unit, the options through real flake8 runs, the
module-wide verdict of HRM405 on quiet trees, and hostile inputs."""

from __future__ import annotations

import ast
import os
import sys
import textwrap
from pathlib import Path

import pytest

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.context import Context
from flake8_hermetic.engine import Engine
from flake8_hermetic.rules.collection.sizes import SATURATED, Built, SizeFolder, fold_int, human_size
from flake8_hermetic.settings import Settings
from tests.helpers import REPO, codes_by_line, flake8, run, write_tree
from tests.helpers import child_env as base_env

MIB = 1024 * 1024


def child_env(home: Path, repo: Path) -> dict[str, str]:
    """The helpers' hermetic environment, with this checkout importable."""
    env = base_env(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo), env.get("PYTHONPATH", "")]))
    return env


def folded(expression: str, prelude: str = "") -> int | Built | None:
    """Fold ``expression`` as the value of a module-level assignment."""
    source = f"{prelude}\nVALUE = {expression}\n"
    tree = ast.parse(source)
    ctx = Context(tree, source.splitlines(True), "test_fold.py", Settings())
    folder = SizeFolder(ctx)
    for statement in tree.body[:-1]:
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            folder.bind(statement.targets[0].id, folder.fold(statement.value))
    value = tree.body[-1].value  # type: ignore[attr-defined]
    return folder.fold(value)


def size_of(expression: str, prelude: str = "") -> int:
    value = folded(expression, prelude)
    assert isinstance(value, Built), f"{expression} did not fold to a sequence: {value!r}"
    return value.size


# -- HRM401: folding -----------------------------------------------------------------

@pytest.mark.parametrize(
    ("expression", "size"),
    [
        pytest.param('b"x" * (64 * 1024 * 1024)', 64 * MIB, id="bytes-times-product"),
        pytest.param('"a" * 40_000_001', 40_000_001, id="str-times-underscored-int"),
        pytest.param('3 * b"ab"', 6, id="int-on-the-left"),
        pytest.param('b"x" * 1024 * 1024 * 2', 2 * MIB, id="left-associative-chain"),
        pytest.param("bytes(10**7)", 10**7, id="bytes-of-int"),
        pytest.param("bytearray(1 << 20)", MIB, id="bytearray-of-shift"),
        pytest.param('bytes(b"ab" * 10)', 20, id="bytes-of-bytes"),
        pytest.param("bytes(range(256))", 256, id="bytes-of-range"),
        pytest.param("[0] * 1000", 8000, id="list-slots"),
        pytest.param("[0, 1] * 1000", 16000, id="two-slots-repeated"),
        pytest.param('[b"x" * 1000] * 10', 80 + 1000, id="repeated-list-shares-its-item"),
        pytest.param("list(range(1000))", 36000, id="list-of-range-counts-int-objects"),
        pytest.param("tuple(range(10, 20, 2))", 5 * 36, id="tuple-of-stepped-range"),
        pytest.param("list(range(10, 0, -3))", 4 * 36, id="descending-range"),
        pytest.param("[*range(100)]", 800, id="spread-range"),
        pytest.param('"\\u20ac" * 10', 20, id="two-byte-characters"),
        pytest.param('"\\U0001f600" * 10', 40, id="four-byte-characters"),
        pytest.param('("x" * 100).encode()', 100, id="encoded"),
        pytest.param('b"x" * 100 + b"yz"', 102, id="concatenation"),
        pytest.param("os.urandom(4096)", 4096, id="urandom"),
        pytest.param('b"x" * -5', 0, id="negative-count-builds-nothing"),
        pytest.param("CHUNK * 4", 4096, id="name-bound-to-bytes"),
        pytest.param("b'x' * SIZE", 3 * MIB, id="name-bound-to-int"),
    ],
)
def test_size_folds_without_evaluating(expression: str, size: int) -> None:
    prelude = "import os\nCHUNK = b'x' * 1024\nSIZE = 3 * 1024 * 1024"
    assert size_of(expression, prelude) == size


HOSTILE_SIZES = [
    '"x" * 10**100',
    'b"x" * 10**10**10',
    '"x" * (1 << 10**9)',
    "bytes(2**64)",
    "list(range(10**100))",
    'b"x" * (10**100 * 10**100)',
    'b"x" * (-(10**10**10)) * -1',
]


def test_hostile_sizes_saturate_instead_of_growing(tmp_path: Path) -> None:
    # In a child with a timeout: an implementation that computes these hangs instead of failing.
    script = (
        "import sys\n"
        "from tests.test_collection import HOSTILE_SIZES, size_of\n"
        "for expression in HOSTILE_SIZES:\n"
        "    print(size_of(expression))\n"
    )
    result = run([sys.executable, "-c", script], cwd=tmp_path, env=child_env(tmp_path, REPO), timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(SATURATED)] * (len(HOSTILE_SIZES) - 1) + ["0"]


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param('b"x" * len(data)', id="call-of-unknown"),
        pytest.param('b"x" * 10**-1', id="float-power"),
        pytest.param('b"x" * 2.5', id="float"),
        pytest.param('b"x" * True', id="bool"),
        pytest.param('b"x" * (10**100 - 10**100)', id="huge-minus-huge-is-unknown"),
        pytest.param('b"x" * (10**100 // 7)', id="division-of-huge-is-unknown"),
        pytest.param('b"x" + "y"', id="mixed-kinds"),
        pytest.param('f"{x}" * 10', id="f-string"),
        pytest.param("range(10**9)", id="a-range-builds-nothing"),
        pytest.param("bytes(n)", id="unbound-name"),
    ],
)
def test_what_cannot_be_folded_is_unknown(expression: str) -> None:
    assert not isinstance(folded(expression), Built)


@pytest.mark.parametrize(
    ("left", "op", "right", "result"),
    [
        pytest.param(10, ast.Pow(), 7, 10**7, id="exact-power"),
        pytest.param(10, ast.Pow(), 100, SATURATED, id="power-saturates"),
        pytest.param(-10, ast.Pow(), 101, -SATURATED, id="odd-power-of-negative"),
        pytest.param(-1, ast.Pow(), 10**100, 1, id="minus-one-to-even"),
        pytest.param(2, ast.Pow(), -1, None, id="negative-exponent-is-a-float"),
        pytest.param(1, ast.LShift(), 70, SATURATED, id="shift-saturates"),
        pytest.param(SATURATED, ast.Add(), 5, SATURATED, id="saturated-plus-finite"),
        pytest.param(SATURATED, ast.Sub(), SATURATED, None, id="saturated-minus-saturated"),
        pytest.param(7, ast.Mod(), 0, None, id="modulo-by-zero"),
        pytest.param(0, ast.Mult(), SATURATED, 0, id="zero-times-saturated"),
        pytest.param(6, ast.FloorDiv(), 4, 1, id="floor-division"),
    ],
)
def test_int_folding_is_bounded(left: int, op: ast.operator, right: int, result: int | None) -> None:
    assert fold_int(left, op, right) == result


@pytest.mark.parametrize(
    ("size", "text"),
    [
        pytest.param(1000, "1000 bytes", id="bytes"),
        pytest.param(64 * MIB, "64 MiB", id="whole"),
        pytest.param(40_000_001, "38.1 MiB", id="fraction"),
        pytest.param(SATURATED, "more than 16 EiB", id="saturated"),
    ],
)
def test_sizes_read_as_people_write_them(size: int, text: str) -> None:
    assert human_size(size) == text


def lint(source: str, codes: tuple[str, ...]) -> list[tuple[int, str]]:
    rules = [rule for code, rule in all_rules().items() if code in codes]
    found = Engine(rules).lint(ast.parse(source), source.splitlines(True), "test_x.py", Settings())
    return sorted((v.line, v.where) for v in found)


def test_a_parametrize_row_belongs_to_its_test() -> None:
    source = textwrap.dedent(
        """
        import pytest

        class TestUpload:
            @pytest.mark.parametrize("payload", [b"x" * 10**8])
            def test_upload(self, payload):
                assert payload

        BIG = bytes(10**8)
        """
    )
    assert lint(source, ("HRM401",)) == [(5, "TestUpload::test_upload"), (9, "")]


def test_a_bigger_value_is_reported_once_at_its_outermost_expression() -> None:
    assert lint('X = [b"x" * 10**8] * 2 + [b"y"]\n', ("HRM401",)) == [(1, "")]


# -- the options: tests/fixtures/rules/test_hrm40{1,2,4}_option.py (options lines) ------

# -- HRM405: the module-wide verdict ------------------------------------------------

SCAN = (
    "import ast\n"
    "from pathlib import Path\n"
    "{mark}\n"
    "\n"
    "\n"
    "def test_scan():\n"
    '    for path in Path(__file__).parent.rglob("*.py"):\n'
    "        assert ast.parse(path.read_text())\n"
)


def scanning(mark: str) -> str:
    return SCAN.format(mark=mark)


def test_tree_scan_verdict_on_a_real_tree(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "test_flagged.py": scanning(""),
            "test_grouped.py": scanning(
                'import pytest\npytestmark = pytest.mark.xdist_group(name="tree_scan_grouped")'
            ),
            "test_grouped_list.py": scanning(
                "from pytest import mark\npytestmark = [mark.slow, mark.xdist_group(name=\"tree_scan_list\")]"
            ),
            "test_grouped_append.py": scanning(
                "import pytest\npytestmark = []\npytestmark.append(pytest.mark.xdist_group(\"tree_scan_append\"))"
            ),
            "test_other_mark.py": scanning("import pytest\npytestmark = pytest.mark.slow"),
            "conftest.py": scanning(""),
            "tests/run_all.py": "import ast, os\nfor root, _, files in os.walk('.'):\n    ast.parse('')\n",
            "test_parse_only.py": "import ast\n\ndef test_parse():\n    assert ast.parse('x')\n",
            "test_walk_only.py": "import os\n\ndef test_walk():\n    assert list(os.walk('.'))\n",
        },
    )
    result = flake8(["--isolated", "--select=HRM405", "--hermetic-no-baseline", "."], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [(name, line) for name, line, _ in codes_by_line(result.stdout)] == [
        ("./test_flagged.py", 8),
        ("./test_other_mark.py", 9),
    ]
    assert 'name="tree_scan_test_flagged"' in result.stdout


# -- hostile input -------------------------------------------------------------------

def test_hostile_collection_values_lint_quickly(tmp_path: Path) -> None:
    chain = " * ".join(["2"] * 300)  # deeper chains crash other plugins (bugbear), not this one
    write_tree(
        tmp_path,
        {
            "test_hostile.py": f"""\
                import pytest

                TOWER = b"x" * 10**10**10
                SHIFT = "x" * (1 << 10**12)
                CHAIN = b"x" * {chain}
                RANGE = list(range(10**10**10))
                NESTED = {"[" * 50}0{"]" * 50} * 10**9

                @pytest.mark.parametrize("v", [bytes(9**9**9)])
                def test_v(v):
                    assert v
                """,
        },
    )
    result = flake8(["--isolated", "--select=HRM4,HRM5", "--hermetic-no-baseline", "test_hostile.py"], cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert [(line, code) for _, line, code in codes_by_line(result.stdout)] == [
        (3, "HRM401"),
        (4, "HRM401"),
        (5, "HRM401"),
        (6, "HRM401"),
        (7, "HRM401"),
        (9, "HRM401"),
    ]


def test_a_chain_deeper_than_the_fold_limit_is_folded_near_its_leaves() -> None:
    chain = " * ".join(["2"] * 1000)
    every_rule = tuple(code for code in all_rules() if code.startswith(("HRM4", "HRM5")))
    assert lint(f'CHAIN = b"x" * {chain}\n', every_rule) == [(1, "")]
