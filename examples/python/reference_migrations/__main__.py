"""Runs the five reference migrations in a temporary directory: python -m reference_migrations
[--scenario N] [--keep DIR]."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import traceback

from . import events, notas, recipes, uncloudnotes, users

SCENARIOS = {1: notas, 2: recipes, 3: events, 4: uncloudnotes, 5: users}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", type=int, choices=sorted(SCENARIOS))
    parser.add_argument("--keep", metavar="DIR", help="keep the stores in DIR/scenario-N")
    options = parser.parse_args(argv)
    failed = 0
    for number in [options.scenario] if options.scenario else sorted(SCENARIOS):
        directory = (
            os.path.join(options.keep, f"scenario-{number}")
            if options.keep
            else tempfile.mkdtemp(prefix="cdmigrate-py-")
        )
        os.makedirs(directory, exist_ok=True)
        try:
            print(SCENARIOS[number].run(directory))
        except Exception:
            failed += 1
            print(f"{number}. FAILED", file=sys.stderr)
            traceback.print_exc()
        finally:
            if not options.keep:
                shutil.rmtree(directory, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
