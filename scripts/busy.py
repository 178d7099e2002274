"""Run a command beside processes that keep the CPU busy: how to show that the test suite does not
depend on the machine's speed (CI may share its 2 cores with other work).

    .venv/bin/python scripts/busy.py 4 -- .venv/bin/python -m pytest -q -p no:cacheprovider
    .venv/bin/python scripts/busy.py 4 --nice 10 -- ./.ci/run
    .venv/bin/python scripts/busy.py 4                  # only burn, until Ctrl-C

Each burner is a Python process spinning in a loop (at `--nice`, 0 by default: as greedy as the
command). It prints the load average while the command ran (lowest, mean and highest of the
one-minute figure, sampled every 10 s) and the command's wall time, and exits with the command's
status. The burners end with it, however it ends.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time

__all__ = ["burn", "main"]

#: How often the load average is read while the command runs, in seconds.
_SAMPLE_EVERY = 10.0


def burn(count: int, nice: int) -> list[subprocess.Popen[bytes]]:
    """Start `count` processes that spin until they are killed."""
    spin = "import os, sys\nos.nice(int(sys.argv[1]))\nwhile True:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", spin, str(nice)]) for _ in range(count)]


def _load() -> float:
    with open("/proc/loadavg") as loadavg:
        return float(loadavg.read().split()[0])


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, burn, run the command; returns its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, command = args[:at], args[at + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("burners", type=int, nargs="?", default=2 * (os.cpu_count() or 1))
    parser.add_argument("--nice", type=int, default=0, help="the burners' niceness (0: as greedy as the command)")
    options = parser.parse_args(args)
    burners = burn(options.burners, options.nice)
    samples = [_load()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(_SAMPLE_EVERY):
            samples.append(_load())

    threading.Thread(target=sample, daemon=True).start()
    began = time.monotonic()
    status = 0
    try:
        if command:
            status = subprocess.call(command)
        else:
            signal.pause()
    except KeyboardInterrupt:
        status = 130
    finally:
        done.set()
        for burner in burners:
            burner.kill()
            burner.wait()
    seconds = time.monotonic() - began
    mean = sum(samples) / len(samples)
    print(
        f"busy: {options.burners} burner(s) at nice {options.nice}; {seconds / 60:.1f} min wall; load average "
        f"(1 min) lowest {min(samples):.1f}, mean {mean:.1f}, highest {max(samples):.1f}; exit {status}",
        file=sys.stderr,
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
