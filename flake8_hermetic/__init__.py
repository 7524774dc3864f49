"""flake8-hermetic: find the test-suite hazards that leak state and flake."""

__version__ = "0.1.0"
