"""The README's "Using it" lines run as written after its first command: each line, in the order
the README gives them, in one folder where `matchlog demo` ran, through a shell as a person types it.
Only what the README says stands for something of the reader's is replaced: the example match ids
(a Porrinha match the first line played, a backgammon match), the duel's id (the one `matchlog
duel` printed) and a Ray cluster's head, which the suite starts on this machine. Every command of
`matchlog` has a line. `matchlog serve` runs until it serves the viewer, then gets Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from matchlog.cli import app

from .test_cluster import cluster  # noqa: F401  (a head and two workers on 127.0.0.1)

ROOT = Path(__file__).resolve().parent.parent
PORRINHA_ID, BACKGAMMON_ID, HEAD = "01a1fcca-6e4c", "01a1fcd7-2b90", "HEAD:6379"
DUEL_ID = "01a1fd3c-0f5e"  # a prefix, as the README shows a duel named by one
#: The fork the README makes of the Porrinha match (an ended match is never undone: its reveals stay).
FORK_ID = "01a1fd0b-4e2a"
#: Commands the README leaves to the guides: an arbiter's last resort, the viewer's companion for
#: Fish, and a receipt, which `prove` covers for a reader.
NOT_IN_THE_README = {"abandon", "client", "receipt", "demo"}


def using_it() -> list[str]:
    """The lines of the README's "Using it" block."""
    block = (ROOT / "README.md").read_text().split("## Using it")[1].split("```sh\n")[1].split("```")[0]
    return [line for line in block.splitlines() if line.strip()]


def _shell(line: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", line], check=False, cwd=folder, env=env, capture_output=True, text=True, timeout=900
    )


def _ids(folder: Path, env: dict[str, str]) -> dict[str, str]:
    """A match for each example id: the newest 3-seat Porrinha match long enough for the lines about
    it (seq 14 is forked), and the first backgammon match (played from the start)."""
    listed = json.loads(_shell("matchlog list --json --limit 1000", folder, env).stdout)
    porrinha = next(m for m in listed if m["game"] == "porrinha" and len(m["players"]) == 3 and m["events"] > 41)
    backgammon = [m for m in listed if m["game"] == "backgammon"][-1]
    return {PORRINHA_ID: porrinha["match_id"], BACKGAMMON_ID: backgammon["match_id"]}


def _serve(line: str, folder: Path, env: dict[str, str]) -> None:
    """`matchlog serve` as written: it serves the viewer at the address it says, and Ctrl-C ends it."""
    process = subprocess.Popen(
        ["sh", "-c", line], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        served = folder / "matches.duckdb.server"
        deadline = time.monotonic() + 60
        while not served.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert served.exists(), process.communicate(timeout=30)
        url = json.loads(served.read_text())["url"]
        assert httpx.get(f"{url}/", timeout=30).status_code == 200
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C at the terminal: the shell and matchlog both get it
        _, err = process.communicate(timeout=60)
        assert process.returncode in (0, 130, -signal.SIGINT) and b"Traceback" not in err, err
        deadline = time.monotonic() + 60
        while served.exists() and time.monotonic() < deadline:  # the server let go of the log
            time.sleep(0.1)
        assert not served.exists()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_the_readmes_lines_run_as_written_after_its_first_command(tmp_path: Path, cluster: Any):  # noqa: F811
    folder = tmp_path / "repository"
    folder.mkdir()
    shutil.copytree(ROOT / "examples", folder / "examples")
    env = {key: value for key, value in os.environ.items() if not key.startswith("MATCHLOG_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MATCHLOG_PORT"] = "0"  # `matchlog serve` as written, on a free port rather than 8080
    demo = _shell("matchlog demo", folder, env)
    assert demo.returncode == 0, demo.stderr
    assert "matchlog serve" in demo.stdout and "http://127.0.0.1:8080/" in demo.stdout  # what to try next
    lines = using_it()
    assert len(lines) >= 25 and PORRINHA_ID in " ".join(lines) and BACKGAMMON_ID in " ".join(lines)
    ids: dict[str, str] = {}
    duel_id = fork_id = ""
    for written in lines:
        if written.startswith("matchlog serve"):
            _serve(written, folder, env)
            continue
        line = written.replace(HEAD, cluster.address)
        if PORRINHA_ID in line or BACKGAMMON_ID in line:
            ids = ids or _ids(folder, env)
            for example, match_id in ids.items():
                line = line.replace(example, match_id)
        if DUEL_ID in line:
            assert duel_id, "the duel's line comes first"
            line = line.replace(DUEL_ID, duel_id[: len(DUEL_ID)])
        if FORK_ID in line:
            assert fork_id, "the fork's line comes first"
            line = line.replace(FORK_ID, fork_id)
        ran = _shell(line, folder, env)
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, (written, ran.stdout[-2000:], ran.stderr)
        assert "error[" not in ran.stderr, (written, ran.stderr)
        if written.startswith("matchlog fork "):
            fork_id = re.match(r"match (\S+) is a fork of", ran.stdout).group(1)  # type: ignore[union-attr]
        if written.startswith("matchlog duel "):
            duel_id = re.match(r"duel (\S+):", ran.stdout).group(1)  # type: ignore[union-attr]
        if written.startswith("matchlog duel-report "):
            assert ran.stdout.startswith(f"duel {duel_id}:") and "verdict:" in ran.stdout, ran.stdout
    assert (folder / "stats.png").stat().st_size > 0 and (folder / "game.mat").exists()
    assert (folder / "match-archive" / "_delta_log").is_dir() and (folder / "bg-data").is_dir()


def test_the_readme_has_a_line_for_every_command():
    """Every command of `matchlog` (a group's by the group's name) is in a line of "Using it", but
    the few it leaves to the guides; `demo` is its first command."""
    commands = {command.name for command in [*app.registered_commands, *app.registered_groups]}
    shown = {part.split()[1] for written in using_it() for part in written.split("&& ")}
    assert commands - NOT_IN_THE_README <= shown, commands - NOT_IN_THE_README - shown
    assert NOT_IN_THE_README - {"demo"} <= commands - shown
