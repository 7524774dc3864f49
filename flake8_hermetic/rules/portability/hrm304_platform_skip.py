"""HRM304: a skip decided by the platform's name instead of a capability."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


PLATFORM_READS = frozenset({"sys.platform", "os.name", "platform.system"})
PLATFORM_TEXT = re.compile(r"\b(?:sys\.platform|os\.name|platform\.system\s*\()")
#: a reason that cites a defect: the skip works around a platform bug, and
#: there is no capability to probe for
DEFECT_REASON = re.compile(r"\b(?:bugs?|issue|bpo-\d+|gh-\d+|crash(?:es)?|broken)\b|#\d+", re.IGNORECASE)
#: what a probe can ask for (principle ``names-a-capability``): an API by its name (``mkfifo()``,
#: ``os.getuid``, ``AF_UNIX``, ``SIGINT``) or a feature of the OS or file system a try-it helper tests
_EXTENSIONS = "py|pyc|txt|cfg|toml|json|ini|md|rst|yml|yaml|exe|dll|so|dylib|sh|bat|cmd|ps1|lock|log|html|xml"
CAPABILITY_REASON = re.compile(
    r"\b[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*\("  # a call: mkfifo(), os.kill(pid, SIGINT)
    # a module's attribute (os.getsid), not a file name (setup.py), an abbreviation (e.g., i.e.) or a host name
    rf"|(?<![\w.])(?!(?:e\.g|i\.e)\b)[a-z_][a-z0-9_]*\.(?!(?:{_EXTENSIONS})\b)[a-z_][a-z0-9_]*\b(?!\.\w)"
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bSIG[A-Z]{2,}\b"  # a constant: AF_UNIX, SOCK_SEQPACKET, SIGHUP
    r"|(?i:\b(?:sym(?:bolic)?[- ]?links?|hard[- ]?links?|unix(?:[- ]domain)?[- ]sockets?|fork(?:ing|ed)?|signals?"
    r"|permissions?|mode[- ]bits|file[- ]modes?|\w*chmod|\w*chown|owners?(?:hip)?|fifos?|named[- ]pipes?"
    r"|ptys?|pseudo[- ]?terminals?|procfs|case[- ](?:in)?sensitiv\w*|extended[- ]attributes|xattrs?"
    r"|file[- ]?names?)\b|/proc\b)"
)
#: words saying the platform lacks what the reason names
ABSENCE_REASON = re.compile(
    r"\b(?:not\s+(?:available|supported|allowed|possible|implemented)|unavailable|unsupported|disallowed"
    r"|(?:does|do|is|are)(?:\s+not|n't)\s+(?:have|support|exist|work|allow|available|supported)"
    r"|cannot|can't|no|lacks?|without|missing|needs?|requires?|only)\b",
    re.IGNORECASE,
)
SKIP_CALLS = frozenset(
    {
        "pytest.mark.skipif",
        "unittest.skipIf",
        "unittest.skipUnless",
        "unittest.case.skipIf",
        "unittest.case.skipUnless",
    }
)


class PlatformSkipRule(Rule):
    """
    Flags a skip decided by the platform's name (`sys.platform`, `os.name`, `platform.system()`) whose reason says the platform lacks a capability a probe could test.

    ## Why is this bad?
    A platform name stands in for the thing the test really needs: symlink
    privileges, `fork`, a case-sensitive file system, a binary on `PATH`.
    The guess is wrong in both directions. A Windows runner that holds the
    symlink privilege skips a test that would have run; a Linux container
    without the capability runs a test that cannot pass. The skip also
    never expires: when the capability arrives on the skipped platform,
    nothing turns red to say the test could run there now.

    **Only a skip whose reason names a missing capability is flagged.**
    The reason is what says what the platform stands in for: "mkfifo() is
    not available on Windows", "symbolic links are not supported", "no
    UNIX sockets", "needs fork". A reason naming only the platform
    ("Windows-only test", "applies only to POSIX"), a behaviour of it
    ("terminate() kills at once on Windows"), or no reason at all, is a
    test about that platform, and is left alone.

    A skip whose reason cites a defect (`"see issue #12958"`, `"known OS
    bug"`, `"bpo-30807"`, `"crashes on AIX"`) works around a bug of that
    platform, with no capability to probe: it is not flagged.

    The condition is read directly, as a string condition
    (`skipif("sys.platform == 'win32'")`), and through module or class
    level names assigned from a platform read earlier in the file
    (`IS_WINDOWS = sys.platform == "win32"`).

    ## Example
    ```python
    @pytest.mark.skipif(sys.platform == "win32", reason="no symlinks on Windows")
    def test_follows_links(tmp_path):
        ...
    ```

    ## Use instead
    ```python
    def can_symlink() -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                os.symlink(tmp, os.path.join(tmp, "link"))
            except (OSError, NotImplementedError):
                return False
        return True

    @pytest.mark.skipif(not can_symlink(), reason="needs symlink privileges")
    def test_follows_links(tmp_path):
        ...
    ```
    Probe the capability the test needs, so the report names it and the
    test runs wherever the capability exists.

    ## Options
    None.

    ## Known problems
    The reason is read, not the test: a skip whose reason names a
    capability the code under test picks by platform anyway (so a probe
    would run the test and fail) is still flagged, and one whose reason is
    vague about a real capability ("Windows cannot open file handles
    twice") is not. A reason built at run time is not read.
    """

    code = "HRM304"
    principles = ("names-a-capability",)
    narrowed = ("it flagged every skip decided by the platform's name; it now flags one whose reason says the"
                " platform lacks a capability a probe can ask for, and names it.")
    message = "skip guessed from the platform's name; probe the capability the test needs (hasattr, a try-it helper) so it runs wherever that exists"
    calls = SKIP_CALLS
    default_on = False

    __slots__ = ("_platform_names",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._platform_names: set[str] = set()

    def _reads_platform(self, expr: ast.AST) -> bool:
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Attribute, ast.Name)):
                name = self.ctx.resolve(node)
                if name in PLATFORM_READS or (isinstance(node, ast.Name) and node.id in self._platform_names):
                    return True
            if not isinstance(node, ast.Lambda):
                stack.extend(ast.iter_child_nodes(node))
        return False

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        if self.ctx.at_module_level and self._reads_platform(node.value):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        self._platform_names.add(name.id)
        return iter(())

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.ctx.call_name(node) not in SKIP_CALLS:
            return
        condition = node.args[0] if node.args else None
        if condition is None:
            condition = next((k.value for k in node.keywords if k.arg == "condition"), None)
        if condition is None:
            return
        if isinstance(condition, ast.Constant) and isinstance(condition.value, str):
            # pytest evaluates a string condition with sys, os and platform in scope
            guessed = PLATFORM_TEXT.search(condition.value) is not None
        else:
            guessed = self._reads_platform(condition)
        if guessed and self._stands_in_for_a_capability(node):
            yield self.report(node)

    @staticmethod
    def _stands_in_for_a_capability(call: ast.Call) -> bool:
        """The reason says the platform lacks something a probe can ask for, and cites no
        defect (principle ``names-a-capability``); no reason, or one naming only the
        platform ("Windows-only", "applies only to POSIX"), is the platform as the subject."""
        texts = _reason_texts(call)
        if any(DEFECT_REASON.search(text) for text in texts):
            return False
        text = " ".join(texts)
        return CAPABILITY_REASON.search(text) is not None and ABSENCE_REASON.search(text) is not None


def _reason_texts(call: ast.Call) -> list[str]:
    """The literal text of a skip's reason (``reason=`` or unittest's second argument)."""
    reason = call.args[1] if len(call.args) > 1 else None
    if reason is None:
        reason = next((k.value for k in call.keywords if k.arg == "reason"), None)
    texts = [reason.value] if isinstance(reason, ast.Constant) and isinstance(reason.value, str) else []
    if isinstance(reason, ast.JoinedStr):
        texts = [v.value for v in reason.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    if isinstance(reason, ast.BinOp):  # implicit concatenation across lines is one Constant already
        texts = [n.value for n in ast.walk(reason) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return texts
