"""A MkDocs hook: the package `matchlog` laid out as it installs, for the API reference to read.

The repository keeps each subpackage in a folder of its own at the top (`events/` is
`matchlog.events`, `api/` is `matchlog` itself: pyproject's `package-dir`), which an installed
package resolves but a reader of source files (griffe, behind mkdocstrings) does not. Before the
docs build, this hook links the folders into `build/docs-package/matchlog/` as they install, and
mkdocs.yml points mkdocstrings there. The mapping is read from pyproject.toml, so a new folder is
documented as soon as it is packaged.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

__all__ = ["PACKAGE_ROOT", "link_package", "on_config"]

ROOT = Path(__file__).resolve().parent.parent
#: Where the linked package is made (mkdocs.yml's `paths` for mkdocstrings names it too).
PACKAGE_ROOT = ROOT / "build" / "docs-package"


def link_package(root: Path = ROOT, into: Path = PACKAGE_ROOT) -> Path:
    """Link every folder pyproject packages into `into`, laid out as installed; returns the package."""
    mapping: dict[str, str] = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    package = into / "matchlog"
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    for entry in sorted((root / mapping["matchlog"]).iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in sorted(mapping.items()):
        if name != "matchlog":
            (package / name.removeprefix("matchlog.")).symlink_to(root / folder, target_is_directory=True)
    return package


@event_priority(100)  # before mkdocstrings' own on_config, which looks for the package
def on_config(config: Any) -> Any:
    """MkDocs calls this once the configuration is read, before any page is rendered."""
    link_package()
    return config
