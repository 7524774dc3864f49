"""HRM5xx: test design that hides what a test proves.

One module per rule; importing the package registers them. Shared by the
family: ``claims`` (what a test's name and words say it claims), ``skips``
and ``control_flow``.
"""

from flake8_hermetic.rules.design import (  # noqa: F401
    hrm501_no_assertion,
    hrm502_control_flow_in_test,
    hrm503_unnamed_parametrize_row,
    hrm504_private_import,
    hrm505_bare_mock_replacement,
)
