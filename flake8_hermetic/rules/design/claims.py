"""What a test says it claims, in its name, docstring and comments: "this does not crash or raise" (HRM501)."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence
from functools import lru_cache


NO_RAISE_HELPER = re.compile(r"not_?raises?$", re.IGNORECASE)
NO_RAISE_WORDS = frozenset({"crash", "crashes", "segfault", "segfaults", "hang", "hangs", "smoke", "cleanly"})
# words of a test's name that state "this call goes through" (``test_overload_succeeds``, ``test_is_picklable``)
SUCCESS_WORDS = frozenset(
    {"succeeds", "success", "works", "ok", "accepts", "accepted", "can", "picklable", "pickleable", "hashable", "importable"}
)
NO_RAISE_PAIRS = frozenset(
    {("not", "raise"), ("not", "raises"), ("doesnt", "raise"), ("no", "error"), ("no", "errors"), ("no", "exception"), ("no", "exceptions")}
)
# What a docstring or comment says when the test's claim is "this (no longer) crashes or raises".
# Only words that make sense for that claim: "should return 3" in a test that looks at nothing stays flagged.
_BAD_OUTCOME = r"(?:raise|fail|crash|error|exception|throw|blow|break|die|abort|segfault|hang|deadlock|overflow|choke|leak|kill)"
NO_RAISE_TEXT = re.compile(
    "|".join(
        (
            # the bug was a crash
            r"\bcrash", r"\bseg(?:mentation)?[ -]?faults?\b", r"\bdumps? core\b", r"\bcore dump",
            r"\bhang(?:s|ing)?\b", r"\bdeadlock", r"\bblow(?:s|n)? up\b", r"\bblocks? forever\b",
            r"\bfailed assertion\b",
            r"\b(?:stack|buffer|memory|heap) (?:overflow|overrun|overread)", r"\buse[- ]after[- ]free\b",
            r"\binfinite (?:loop|recursion)", r"\bassert(?:ion)?[- ](?:fail|error)", r"\bsmoke[- ]test",
            # the bug was an exception: "used to raise", "this raised on 3.10", "resulted in SystemError"
            rf"\bused to (?:erroneously )?{_BAD_OUTCOME}", r"\b(?:would|used to) assert\b", rf"\b(?:would|could|will) (?:\w+ )?{_BAD_OUTCOME}",
            r"\b(?:this|it|which) (?:raised|threw|failed)\b", r"\bresulted in \w*(?:error|exception|fault)",
            r"\b(?:fails|failed|raises|raised|crashes|crashed) (?:when|with|if|on)\b", r"\bdid not work\b",
            r"\b(?:was|were) failing\b", r"\bbroke\b",
            # a leak the refleak hunter (regrtest -R) catches: "super.__init__ leaked memory"
            r"\b(?:ref(?:erence)?[- ]?)?leak(?:s|ed|ing)?\b",
            r"\bleads? to\W+\w*(?:error|exception)", r"\b(?:raised|threw)\W+\w*(?:error|exception)",
            r"\bcause[sd]?\b[^.]{0,40}\bto raise\b",
            # the claim spelled out: "shouldn't raise", "without error", "should work", "is allowed"
            rf"\b(?:not|never|no longer) (?:\w+ )?{_BAD_OUTCOME}", r"\bno (?:error|exception|crash|failure)s?\b",
            r"\bwithout (?:raising |throwing )?(?:an? |any )?(?:error|exception|crash|failure|problem)s?\b",
            r"\bnot an error\b", r"\b(?:runs?|exits?|shuts? down|stops?|closes?) cleanly\b", r"\bfall apart\b",
            r"\b(?:should|must|can|will|needs? to) (?:still |also |now |simply |always )?"
            r"(?:work|succeed|compile ok|handle|hide|cope|be able|accept|be supported)",
            r"\b(?:should|must|is|are|it's) (?:also |still |probably )?(?:be )?(?:ok|okay|fine|allowed|accepted|possible|supported)\b",
            r"\b(?:should|must) pass\b", r"\bcan (?:still |also )?be \w+(?:ed|en)\b",
            r"\bworks\b", r"\bwork\s*(?:[.!]|$)", r"\bsucceed(?:s|ed)?\b", r"\bnothing happens\b",
            r"\bsilent(?:ly)?\b",
        )
    )
)
# a regression test named after the report it closes: its claim is "this no longer fails"
REGRESSION_NAME = re.compile(r"(?:bpo|gh|issue|bug)_?\d{3,}|(?:^|_)regression(?:_|$)", re.IGNORECASE)
REGRESSION_TEXT = re.compile(r"\b(?:bpo|gh|issue|bug)\s?[-#:]?\s?#?\d{3,}|/(?:issues|pull)/\d+|\bregression\b|(?:^|\s)#\d{4,}\b", re.IGNORECASE)
# doesn't, shouldn't, won't, and the same without the apostrophe
_NOT = re.compile(r"n['\u2019]t\b|\b(do|does|did|should|would|could|must|is|are|was|were)nt\b")


def name_words(name: str) -> list[str]:
    """``testSpawnDoesntHang`` and ``test_spawn_doesnt_hang`` -> test, spawn, doesnt, hang."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]


def declares_no_raise(name: str) -> bool:
    """Whether a test's name says its claim is "this does not raise"
    (``test_no_crash_on_empty``, ``test_parse_does_not_raise``, ``testSpawnDoesntHang``)."""
    words = name_words(name)
    if NO_RAISE_WORDS.intersection(words) or SUCCESS_WORDS.intersection(words):
        return True
    if REGRESSION_NAME.search(name):
        return True
    return says_no_raise(words)


def says_no_raise(words: list[str]) -> bool:
    return any(pair in NO_RAISE_PAIRS for pair in zip(words, words[1:]))


def states_no_raise(text: str) -> bool:
    """Whether a docstring or comment says the test's claim is that the code
    no longer crashes or raises ("used to raise SystemError", "shouldn't
    crash", "A crash ensued", "should work when no changes were made")."""
    text = _NOT.sub(lambda match: f"{match.group(1) or ''} not", text.lower())
    text = " ".join(text.split())
    return NO_RAISE_TEXT.search(text) is not None or REGRESSION_TEXT.search(text) is not None


def comment_text(lines: Sequence[str], first: int, last: int) -> str:
    """The comments of lines ``first..last`` (1-based), tokenized on their own."""
    chunk = "".join(lines[first - 1:last])
    if "#" not in chunk:
        return ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(chunk).readline))
    except (tokenize.TokenError, SyntaxError):
        return ""
    return " ".join(token.string.lstrip("#") for token in tokens if token.type == tokenize.COMMENT)


def comments_above(lines: Sequence[str], line: int) -> str:
    """The block of comment lines right above ``line`` (1-based)."""
    above = []
    for index in range(line - 2, -1, -1):
        stripped = lines[index].strip() if index < len(lines) else ""
        if not stripped.startswith("#"):
            break
        above.append(stripped.lstrip("#"))
    return " ".join(reversed(above))


@lru_cache(maxsize=4096)  # asked for every call in a test, of a few hundred distinct names
def runs_a_test(name: str) -> bool:
    """Whether a helper's name says it runs a test (``_test_roundtrip``,
    ``runTest``, ``run_unittest``, ``testmod``), not ``get_latest``, and not
    a class (``unittest.SkipTest``, ``TestSuite``)."""
    if name[:1].isupper():
        return False
    return any(w.startswith("test") or w in ("unittest", "doctest") for w in name_words(name))
