"""The documentation in docs/: the site builds with warnings as errors and documents every public
name, every example on it runs, the architecture page's layers are the imports the code makes, and
nothing in the repository links outside it.

How a page's examples run (each page in a directory of its own, holding a copy of one log with
matches of every game, as `matches.duckdb`):

- every ```python block runs, in order, in one namespace per page, as cells of a notebook;
- a block with `title="NAME"` (```python title="my_ai.py") is a file the page shows: it is written
  to NAME for the commands after it;
- every ```sh block runs, line by line, each `matchlog ...` command (`&&` joins several) through
  the CLI in this process; it must succeed;
- HTML comments steer the next block: `<!-- test: skip (why) -->` leaves a shell block out (a
  server that runs until Ctrl-C, a person at the terminal), `<!-- test: exit N -->` expects each
  command to exit with N, `<!-- test: MATCH=GAME -->` sets `$MATCH` to the newest match of GAME for
  the blocks after it, and `<!-- test: serve ... -->` anywhere on a page starts `matchlog serve` on
  its log first, whose real address replaces http://127.0.0.1:8080 in the page's examples.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import matchlog
from matchlog.cli import app

from .conftest import fill_log, start_server

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PACKAGE_DIRS: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
#: The address the pages write for a server on its default port.
DEFAULT_URL = "http://127.0.0.1:8080"

_FENCE = re.compile(r"^```(?P<lang>[\w-]*)(?P<info>[^\n]*)\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_DIRECTIVE = re.compile(r"<!-- test: (?P<what>.*?) -->", re.S)
_TITLE = re.compile(r'title="(?P<name>[^"]+)"')


def _runnable(page: Path) -> bool:
    return any(m["lang"] in ("python", "sh") for m in _FENCE.finditer(page.read_text()))


PAGES = [page.relative_to(DOCS).as_posix() for page in sorted(DOCS.rglob("*.md")) if _runnable(page)]


# -- the site ----------------------------------------------------------------------------------


def test_the_site_builds_with_warnings_as_errors_and_documents_every_public_name(tmp_path: Path):
    site = tmp_path / "site"
    command = ["mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(site)]
    built = subprocess.run(
        [sys.executable, "-m", *command],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr, built.stderr

    reference = (site / "reference" / "matchlog" / "index.html").read_text()
    for name in ("open", "Log", "Log.events_frame", "Match", "Match.state_at", "Line", "Position", "FileLog"):
        assert f'id="matchlog.{name}"' in reference, name
    # Every name a package exports is on its page (a function that shares its module's name is
    # documented from that module: matchlog.replay.audit.audit).
    for package in ("events", "engines", "referee", "replay", "store", "formats"):
        page = (site / "reference" / package / "index.html").read_text()
        module = importlib.import_module(f"matchlog.{package}")
        missing = [
            name
            for name in module.__all__
            if f'id="matchlog.{package}.{name}"' not in page and f'id="matchlog.{package}.{name}.{name}"' not in page
        ]
        assert not missing, (package, missing)
    # Every guide made it into the site, the screenshots with it.
    for page in DOCS.rglob("*.md"):
        relative = page.relative_to(DOCS).with_suffix("")
        target = site / ("index.html" if relative.name == "index" else relative / "index.html")
        assert target.exists(), page
    assert (site / "screenshots" / "fish.png").exists()


# -- the examples ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One log with finished matches of every game, copied for each page."""
    db = tmp_path_factory.mktemp("docs-log") / "matches.duckdb"
    fill_log(db)
    return db


@pytest.fixture
def page_dir(tmp_path: Path, base_log: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding a copy of the base log as `matches.duckdb`, and the current directory."""
    for path in base_log.parent.glob("matches.duckdb*"):
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MATCHLOG_DB", raising=False)
    monkeypatch.delenv("MATCHLOG_SERVER", raising=False)
    monkeypatch.delenv("MATCHLOG_TOKEN", raising=False)
    return tmp_path


def _newest(game: str) -> str:
    with matchlog.open("matches.duckdb") as log:
        found = log.matches(game=game, limit=1)
    assert found, f"the page's log has no {game} match for $MATCH"
    return str(found[0].match_id)


def _commands(block: str, variables: dict[str, str]) -> Iterator[list[str]]:
    """The `matchlog` commands of a shell block, as argument lists (without `matchlog`)."""
    text = block.replace("\\\n", " ")
    for name, value in variables.items():
        text = text.replace(f'"${name}"', value).replace(f"${name}", value)
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, "&&"]:
            if word != "&&":
                command.append(word)
                continue
            if not command:
                continue
            assert command[0] == "matchlog" and not {"|", ">", ";", "<"} & set(command), (
                f"the test runs `matchlog ...` commands only: {line!r}; "
                "mark the block <!-- test: skip (why) --> if it cannot run"
            )
            yield command[1:]
            command = []


def _run_page(relative: str) -> None:
    """Run every example of one page in the current directory, as the module docstring says."""
    page = DOCS / relative
    text = page.read_text()
    served = start_server(Path("matches.duckdb").resolve()) if "<!-- test: serve" in text else None
    try:
        url = served.url if served is not None else DEFAULT_URL
        namespace: dict[str, object] = {"__name__": "__docs__"}
        variables: dict[str, str] = {}
        skip, exit_code = False, 0
        items = sorted([*_DIRECTIVE.finditer(text), *_FENCE.finditer(text)], key=lambda m: m.start())
        for item in items:
            line = text.count("\n", 0, item.start()) + 1
            if item.re is _DIRECTIVE:
                what = item["what"].strip()
                if what.startswith("skip"):
                    skip = True
                elif what.startswith("exit "):
                    exit_code = int(what.split()[1])
                elif what.startswith("MATCH="):
                    variables["MATCH"] = _newest(what.removeprefix("MATCH="))
                else:
                    assert what.startswith("serve"), f"{relative}:{line}: unknown directive {what!r}"
                continue
            lang, body = item["lang"], item["body"].replace(DEFAULT_URL, url)
            title = _TITLE.search(item["info"])
            if title:
                Path(title["name"]).write_text(body)
            elif lang == "python":
                assert not skip, f"{relative}:{line}: every Python example runs"
                exec(compile(body, f"{relative}:{line}", "exec"), namespace)
            elif lang == "sh" and not skip:
                for args in _commands(body, variables):
                    result = CliRunner().invoke(app, args)
                    assert result.exit_code == exit_code, (
                        f"{relative}:{line}: matchlog {shlex.join(args)} exited {result.exit_code}",
                        result.stdout[-2000:],
                        result.stderr[-2000:],
                    )
            if item["lang"]:
                skip, exit_code = False, 0
    finally:
        if served is not None:
            served.stop()


@pytest.mark.parametrize("relative", PAGES)
def test_every_example_on_the_page_runs(relative: str, page_dir: Path):
    _run_page(relative)


def _docstring_examples() -> Iterator[tuple[str, str]]:
    """Every ```python block in a docstring of the package's modules, with where it is."""
    for folder in sorted(set(PACKAGE_DIRS.values())):
        for source in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(source.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    docstring = ast.get_docstring(node)
                    for block in _FENCE.finditer(docstring or ""):
                        if block["lang"] == "python":
                            yield f"{source.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", block["body"]


def test_every_example_in_a_docstring_runs(page_dir: Path):
    examples = list(_docstring_examples())
    assert examples  # matchlog's own docstring has one
    for where, body in examples:
        exec(compile(body, where, "exec"), {"__name__": "__docs__"})


# -- what the pages claim ----------------------------------------------------------------------


def _imports_of(folder: Path, packages: dict[str, str]) -> set[str]:
    """Which of matchlog's packages (by their short name, `matchlog` for api/) `folder` imports."""
    found: set[str] = set()
    for source in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "matchlog":
                    found.add(parts[1] if len(parts) > 1 and parts[1] in packages else "matchlog")
    return found


def test_the_layers_on_the_architecture_page_are_the_imports_the_code_makes():
    packages = {name.removeprefix("matchlog."): folder for name, folder in PACKAGE_DIRS.items()}
    packages["matchlog"] = packages.pop("matchlog")
    table = (DOCS / "architecture.md").read_text().split("| package | imports from matchlog |")[1]
    claimed: dict[str, set[str]] = {}
    for row in re.findall(r"^\| `(\w+)`[^|]* \| (.*) \|$", table, re.M):
        claimed[row[0]] = set(re.findall(r"`(\w+)`", row[1]))
    code = {name: _imports_of(ROOT / folder, packages) - {name} for name, folder in packages.items()}
    assert claimed == code


def _module_imports() -> dict[str, set[str]]:
    """Every module of matchlog (`matchlog.referee.play`, ...) and the modules of matchlog it imports,
    wherever the import stands (at the top, in a function, for type checking): each is a dependency."""
    modules: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        for source in sorted((ROOT / folder).glob("*.py")):
            modules[package if source.stem == "__init__" else f"{package}.{source.stem}"] = source
    graph: dict[str, set[str]] = {}
    for name, source in modules.items():
        package = name if source.stem == "__init__" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                where = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
                submodules = {f"{where}.{alias.name}" for alias in node.names} & modules.keys()
                found |= submodules or ({where} & modules.keys())  # `from . import x` needs x, not the package
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names} & modules.keys()
        graph[name] = found - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm): each a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_imports_point_one_way_between_packages_and_among_the_referees_modules():
    packages = {name.removeprefix("matchlog."): folder for name, folder in PACKAGE_DIRS.items()}
    between = {name: _imports_of(ROOT / folder, packages) - {name} for name, folder in packages.items()}
    assert _cycles(between) == []
    referee = {
        name: {other for other in imports if other.startswith("matchlog.referee.")}
        for name, imports in _module_imports().items()
        if name.startswith("matchlog.referee.")
    }
    assert len(referee) > 15 and referee["matchlog.referee.play"]  # the graph was read
    assert _cycles(referee) == []


_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)[^)]*\)")


def test_the_readme_links_only_to_files_in_the_repository_and_keeps_its_two_commands():
    readme = (ROOT / "README.md").read_text()
    for link in _LINK.finditer(readme):
        target = link["target"]
        if target.startswith(("http://", "https://", "#")):
            continue
        path = (ROOT / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT) and path.exists(), target
    ci = (ROOT / ".ci" / "run").read_text()
    first, second = re.search(r"```sh\n(.*?)\n(.*?)\n```", readme, re.S).groups()  # type: ignore[union-attr]
    assert first.endswith("matchlog demo") and second in ci
    assert "## What matchlog guarantees" in readme


def test_every_test_the_guarantees_table_names_exists():
    table = (ROOT / "README.md").read_text().split("## What matchlog guarantees")[1].split("\n## ")[0]
    named = 0
    for row in table.splitlines():
        file = None
        for where, test in re.findall(r"`(test_\w+\.py)?::(test_\w+)`", row):
            file = where or file
            assert file is not None, row
            defined = {
                node.name
                for node in ast.walk(ast.parse((ROOT / "tests" / file).read_text()))
                if isinstance(node, ast.FunctionDef)
            }
            assert test in defined, (file, test)
            named += 1
        for file_only in re.findall(r"`(test_\w+\.py)`", row):
            assert (ROOT / "tests" / file_only).exists(), file_only
    assert named >= 10


_OUR_VERSION = re.compile(
    r"\b(?:matchlog|before|since|until|after|from|in) v?(\d+\.\d+(?:\.\d+)?)\b(?!\s*(?:s\b|ms\b|%|seconds|x\b))"
)


def test_no_text_names_a_version_of_matchlog_that_does_not_exist():
    ours = tuple(
        int(part) for part in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"].split(".")
    )
    later = []
    for folder in [*PACKAGE_DIRS.values(), "docs"]:
        for source in sorted((ROOT / folder).rglob("*")):
            if source.suffix not in (".py", ".md") or not source.is_file():
                continue
            for found in _OUR_VERSION.finditer(source.read_text()):
                named = tuple(int(part) for part in found.group(1).split("."))
                if named[:1] == (0,) and named + (0,) * (3 - len(named)) > ours:
                    later.append(f"{source.relative_to(ROOT)}: {found.group(0)!r}")
    assert later == []


def test_the_pages_say_end_round_reaches_players_out_of_the_game_as_the_referee_does():
    # tests/test_referee_porrinha.py::test_end_round_reaches_players_out_of_the_game_but_not_removed_ones
    # holds what the referee does; the pages must say the same.
    for page in ("protocol.md", "rules.md"):
        text = " ".join((DOCS / page).read_text().split())
        said = text[text.index("`end_round` (") if page == "protocol.md" else text.index("`end_round` is called") :]
        assert "out of the game" in said[:160] and "who played the round" not in said[:160], page


def test_nothing_in_the_repository_points_at_the_developers_notes_outside_it():
    outside = ("../" + "shared", "/work/" + "shared")
    kept = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".c", ".js", ".css", ".html", ""}
    skipped = {".git", ".venv", "build", "__pycache__", ".hypothesis", ".pytest_cache", ".ruff_cache"}
    offenders = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if name not in skipped and not name.endswith(".egg-info")]
        for name in files:
            path = Path(folder) / name
            if path.suffix in kept and any(text in path.read_text(errors="replace") for text in outside):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders
