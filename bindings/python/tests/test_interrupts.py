"""Ctrl-C during a run: KeyboardInterrupt comes out of ``run`` as KeyboardInterrupt (never as
MigrationCancelledError), the store is left as it was, and nothing is printed as "Exception
ignored" from inside a ctypes callback."""

from __future__ import annotations

import _thread
import json
import os
import signal
import threading

import pytest
from conftest import copy_mapping, sha256

import cdmigrate

ROWS = {"entities": [{"name": "Row", "attributes": [{"name": "name", "type": "string", "optional": True}]}]}
# MATCHES does not translate to SQL, so the rows are copied one by one in the library (with no
# Python frame running) for long enough that the signal arrives during the copy: a mapping that
# runs as one INSERT … SELECT may end before the timer fires.
ROW_MAPPING = {
    "entityMappings": [
        {
            "name": "RowToRow",
            "sourceEntity": "Row",
            "destinationEntity": "Row",
            "predicate": "name MATCHES 'row [0-9]+'",
            "attributeMappings": {"name": "$source.name"},
        }
    ]
}


def test_ctrl_c_while_the_library_works_raises_keyboard_interrupt(tmp_path, capfd):
    """SIGINT arrives while C copies rows (no Python frame is running), as a real Ctrl-C does:
    Python notices it only when the next callback starts."""
    model = cdmigrate.Model.from_json(json.dumps(ROWS))
    source = str(tmp_path / "rows.sqlite")
    with cdmigrate.Store.create(model, source) as store:
        for i in range(5000):
            store.insert("Row", name=f"row {i}")
        store.save()
    before = sha256(source)
    timers = []

    def progress(p):
        if not timers:  # the first step starts: interrupt while the library copies the rows
            timers.append(threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)))
            timers[0].start()

    try:
        with cdmigrate.MappingModel.from_json(json.dumps(ROW_MAPPING)) as mapping, cdmigrate.Migration(
            model, model, mapping
        ) as m:
            with pytest.raises(KeyboardInterrupt):
                m.run(source, tmp_path / "a.sqlite", progress=progress)
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            m.run(source, tmp_path / "b.sqlite")  # usable afterwards
    finally:
        for timer in timers:
            timer.join()
        model.close()
    assert sha256(source) == before
    assert not [f for f in os.listdir(tmp_path) if f.startswith("a.sqlite")]
    captured = capfd.readouterr()
    assert "Exception ignored" not in captured.err
    assert "KeyboardInterrupt" not in captured.err


def test_sigint_inside_a_progress_callback_raises_keyboard_interrupt(tmp_path, kitchen_models, kitchen_store, capfd):
    v1, v2 = kitchen_models

    def progress(p):
        if p.stage == 2:
            signal.raise_signal(signal.SIGINT)

    with cdmigrate.MappingModel.from_json(copy_mapping()) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        with pytest.raises(KeyboardInterrupt):
            m.run(kitchen_store, tmp_path / "a.sqlite", progress=progress)
    assert not [f for f in os.listdir(tmp_path) if f.startswith("a.sqlite")]
    assert "Exception ignored" not in capfd.readouterr().err


def test_interrupt_main_from_a_host_function_raises_keyboard_interrupt(tmp_path, kitchen_models, kitchen_store, capfd):
    v1, v2 = kitchen_models
    text = json.loads(copy_mapping())
    for entity_mapping in text["entityMappings"]:
        if entity_mapping["name"] == "ItemToItem":
            for attribute in entity_mapping["attributeMappings"]:
                if attribute["name"] == "str":
                    attribute["valueExpression"] = 'FUNCTION(CAST("Py", "Class"), "poke:", $source.str)'

    def poke(value):
        _thread.interrupt_main()
        return value

    with cdmigrate.MappingModel.from_json(json.dumps(text)) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        with pytest.raises(KeyboardInterrupt):
            m.run(kitchen_store, tmp_path / "a.sqlite", functions={("Py", "poke:"): poke})
    assert not [f for f in os.listdir(tmp_path) if f.startswith("a.sqlite")]
    captured = capfd.readouterr()
    assert "Exception ignored" not in captured.err


class _PendingHandlerRaised(Exception):
    pass


def test_python_keeps_ctrl_c_when_a_pending_signal_handler_raises_as_the_run_ends(
    tmp_path, kitchen_models, kitchen_store, monkeypatch
):
    """signal.signal runs the handlers of pending signals before it changes anything, and raises
    what one of them raises (a time limit's SIGALRM): putting Python's SIGINT handler back at the
    end of the run must still happen, or Ctrl-C would only mark a finished run from then on."""
    v1, v2 = kitchen_models
    real_signal = signal.signal
    raised = []

    def signal_with_a_pending_handler_raising(number, handler):
        if number == signal.SIGINT and handler is signal.default_int_handler and not raised:
            raised.append(True)
            raise _PendingHandlerRaised
        return real_signal(number, handler)

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    monkeypatch.setattr(signal, "signal", signal_with_a_pending_handler_raising)
    with cdmigrate.MappingModel.from_json(copy_mapping()) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        with pytest.raises(_PendingHandlerRaised):
            m.run(kitchen_store, tmp_path / "a.sqlite")
    monkeypatch.undo()
    assert raised
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000_000):  # the handler runs at the next instruction boundary
            pass
