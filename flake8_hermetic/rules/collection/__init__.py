"""HRM4xx: what a test module costs and reads when it is imported (collected).

One module per rule; importing the package registers them. Shared by the
family: ``import_time`` (whether a node runs at collection), ``sizes`` (the
bytes a constant expression builds) and ``literals``.
"""

from flake8_hermetic.rules.collection import (  # noqa: F401
    hrm401_collection_size,
    hrm402_import_time_host_probe,
    hrm403_import_time_exit,
    hrm404_relative_repo_path,
    hrm405_tree_scan_without_group,
)
