"""Project pattern rules (HRM8xx): ast-grep rules a project declares in YAML.

A rules file (``--hermetic-rules=PATH``) holds a list under ``rules``; each
rule has its own ``HRM8nn`` code and message, an ast-grep rule object
(``rule``, with optional ``constraints`` and ``utils`` exactly as ast-grep
reads them), optional ``files`` globs (default: the test files) and an
optional ``note``. The file is read with ``yaml.safe_load`` and validated
rule by rule when the options are parsed; a problem is one line,
``FILE:LINE: rule HRM8nn: reason``.

Matching parses each file once and runs one ast-grep search for all the
rules that apply to it. ast-grep stops an ``any`` at its first matching
branch and checks ``constraints`` only after the whole rule matched, so a
plain ``any`` of the rules would lose a second rule matching the same node
and a rule whose sibling's constraint failed. The combined rule is
therefore::

    all:
      - any: [R1, ..., Rn]            # cheap filter: most nodes stop here
      - any: [{all: [R1, $$TAG1]}, ANYTHING]
      ...
      - any: [{all: [Rn, $$TAGn]}, ANYTHING]

Every rule's metavariables and utils are renamed apart (``$X`` of HRM801
becomes ``$X_HRM801``), the tag a rule captures says it matched, and each
rule's constraints are checked here on the nodes its metavariables captured
(a verdict that depends on the captured text alone is remembered for the
file). The result equals running every rule on its own
(tests/test_patterns.py compares the two on CPython's test suite and on
generated modules); a single rule runs as written.

ast-grep-py and PyYAML come with the ``patterns`` extra; they are imported
only when a rules file is configured.
"""

from flake8_hermetic.patterns.loader import EXTRA_HINT, load_pattern_rules
from flake8_hermetic.patterns.matching import MatchSpan, PatternMatch, PatternRule, PatternRuleSet, ScopeIndex

__all__ = [
    "EXTRA_HINT", "MatchSpan", "PatternMatch", "PatternRule", "PatternRuleSet", "ScopeIndex", "load_pattern_rules",
]
