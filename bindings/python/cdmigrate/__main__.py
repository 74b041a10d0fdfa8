"""``python -m cdmigrate``: the ``cdmigrate`` command line (docs/cli.md), run by the library — the
same code as the executable and the ``cdmigrate`` console script — with policies written in Python.

    python -m cdmigrate migrate Notes.sqlite --to Notes-v2.sqlite \\
        --source-model v1.json --destination-model v2.json --mapping v1-v2.json --policies notepolicies
    python -m cdmigrate migrate Notes.sqlite --to Notes-v4.sqlite --models UnCloudNotes --policies notepolicies
    python -m cdmigrate check released-stores --models UnCloudNotes --policies notepolicies.py

``--policies MODULE`` imports a module (a dotted name, importable from the current folder, or a
``.py`` file) and registers every ``cdmigrate.EntityMigrationPolicy`` subclass it defines under
its class name (what a mapping's ``policy`` names), its ``POLICIES`` dict and its ``FUNCTIONS``
dict (``{("ClassName", "selector:"): callable}``); a value ending in ``.so`` is a shared library of
C policies, as for the executable. Exit codes are those of docs/cli.md.
"""

import sys

from ._command_line import main

if __name__ == "__main__":
    sys.exit(main())
