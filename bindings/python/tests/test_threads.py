"""Migrations on several Python threads at once: each gets its right result, Python policies are
called back on the thread that runs their migration, the binding lets other threads run while a
migration is in the library (ctypes releases the GIL), and two migrations to one destination end
with one store and one "busy" error."""

from __future__ import annotations

import shutil
import threading

from conftest import copy_mapping, leftovers, rows, sha256

import cdmigrate
from cdmigrate import _run

THREADS = 8


def tagging_policy(tag: str, seen_threads: list, barrier: threading.Barrier | None = None):
    """A policy that writes `tag` into every item's text and notes the thread it is called on."""

    class Tagging(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            seen_threads.append(threading.get_ident())
            if barrier is not None:
                # Every thread's policy waits here for all the others: it only gets through if the
                # migrations really run at the same time (a binding holding the GIL, or one lock
                # around the library, would time out here).
                barrier.wait(60)

        def create_destination_instances(self, source, mapping, manager):
            seen_threads.append(threading.get_ident())
            destination = super().create_destination_instances(source, mapping, manager)
            destination["str"] = f"{tag}:{source['i64']}"
            return destination

    return Tagging


def test_eight_threads_each_migrate_their_own_store_with_a_python_policy(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    sources = []
    for n in range(THREADS):
        path = tmp_path / f"source-{n}.sqlite"
        shutil.copyfile(kitchen_store, path)
        sources.append(str(path))
    before = [sha256(s) for s in sources]
    barrier = threading.Barrier(THREADS)
    seen = {n: [] for n in range(THREADS)}
    idents, reports, errors = {}, {}, []

    def work(n):
        idents[n] = threading.get_ident()
        try:
            mapping = cdmigrate.MappingModel.from_json(copy_mapping(item_policy="Tag"))
            with cdmigrate.Migration(v1, v2, mapping, policies={"Tag": tagging_policy(f"t{n}", seen[n], barrier)}) as m:
                mapping.close()
                reports[n] = m.run(sources[n], tmp_path / f"destination-{n}.sqlite")
        except Exception as error:  # reported below
            errors.append((n, error))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert not any(t.is_alive() for t in threads)
    for n in range(THREADS):
        destination = str(tmp_path / f"destination-{n}.sqlite")
        assert reports[n].destination_counts == {"Box": 3, "Item": 30}
        # Every item carries its own thread's tag, and its own number: no thread saw another's rows.
        assert rows(destination, "SELECT ZI64, ZSTR FROM ZITEM ORDER BY ZI64") == [(i, f"t{n}:{i}") for i in range(30)]
        assert rows(destination, "SELECT COUNT(*) FROM ZITEM WHERE ZBOX IS NOT NULL") == [(20,)]
        # The policy ran on the thread that ran its migration, once per item plus its begin.
        assert seen[n] == [idents[n]] * 31
        assert sha256(sources[n]) == before[n]


def test_two_threads_migrating_to_one_destination_one_wins_the_other_is_busy(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    destination = tmp_path / "shared.sqlite"
    started, release = threading.Event(), threading.Event()
    outcomes = {}

    class Holding(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            started.set()
            release.wait(30)

    def run(name, policy):
        mapping = cdmigrate.MappingModel.from_json(copy_mapping(item_policy="P"))
        try:
            with cdmigrate.Migration(v1, v2, mapping, policies={"P": policy}) as m:
                mapping.close()
                outcomes[name] = m.run(kitchen_store, destination)
        except cdmigrate.MigrationError as error:
            outcomes[name] = error

    first = threading.Thread(target=run, args=("first", Holding))
    first.start()
    assert started.wait(30)  # the first run holds the destination's lock, in its policy
    second = threading.Thread(target=run, args=("second", tagging_policy("second", [])))
    second.start()
    second.join(30)
    release.set()
    first.join(30)
    assert isinstance(outcomes["second"], cdmigrate.DestinationStoreError)
    assert "is busy: another migration to it is running" in str(outcomes["second"])
    assert outcomes["first"].destination_counts == {"Box": 3, "Item": 30}
    # Nothing but the store is left (looked at before reading it, which makes SQLite's -wal/-shm) ...
    assert leftovers(str(tmp_path), "shared.sqlite") == ["shared.sqlite"]
    # ... and it is the first run's whole store (the second never wrote a row).
    assert rows(str(destination), "SELECT COUNT(*) FROM ZITEM WHERE ZSTR LIKE 'second:%'") == [(0,)]
    assert rows(str(destination), "SELECT COUNT(*) FROM ZITEM") == [(30,)]


def test_a_python_policy_failing_on_one_thread_does_not_disturb_the_others(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models

    class Boom(Exception):
        pass

    class Failing(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            if source["i64"] == 7:
                raise Boom("item 7 of the failing thread")
            return super().create_destination_instances(source, mapping, manager)

    outcomes = {}

    def run(n):
        policy = Failing if n == 0 else tagging_policy(f"t{n}", [])
        mapping = cdmigrate.MappingModel.from_json(copy_mapping(item_policy="P"))
        try:
            with cdmigrate.Migration(v1, v2, mapping, policies={"P": policy}) as m:
                mapping.close()
                outcomes[n] = m.run(kitchen_store, tmp_path / f"out-{n}.sqlite")
        except Exception as error:
            outcomes[n] = error

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    # The exception raised in the policy comes back on its own thread, with its own message.
    assert isinstance(outcomes[0], Boom) and "item 7 of the failing thread" in str(outcomes[0])
    assert not (tmp_path / "out-0.sqlite").exists()
    for n in range(1, 4):
        assert rows(str(tmp_path / f"out-{n}.sqlite"), "SELECT COUNT(*) FROM ZITEM WHERE ZSTR LIKE ?", f"t{n}:%") == [
            (30,)
        ]


def test_migrations_closed_on_their_threads_release_their_callbacks(tmp_path, kitchen_models, kitchen_store):
    before = len(_run.registry)
    test_two_threads_migrating_to_one_destination_one_wins_the_other_is_busy(tmp_path, kitchen_models, kitchen_store)
    assert len(_run.registry) == before
