"""The five reference migrations of examples/scenarios.md with their policies in Python.

Each module has ``generate_source(path)`` (a deterministic store made through cdmigrate.Store),
``migrate(source, destination)`` (the migration with its policies and host functions) and
``run(directory)`` (both, returning a short summary). ``python -m reference_migrations`` from
examples/python runs them all. The JSON models and mappings are the ones in examples/<n>-*/.
"""
