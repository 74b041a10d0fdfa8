"""Policies for test_fleet.py, imported by name in the fleet's worker processes: scenario 5's
policies, except that a user named "raise" makes the Finnish policy raise and a user named "die"
ends the worker process on the spot (as a crash in native code would)."""

import os

from reference_migrations import users


class FinlandOrFailure(users.FinlandUserMapping):
    def create_destination_instances(self, source, mapping, manager):
        name = source["name"]
        if name == "raise":
            raise RuntimeError("this user cannot be migrated")
        if name == "die":
            os._exit(3)
        super().create_destination_instances(source, mapping, manager)


POLICIES = {**users.POLICIES, "FinlandUserMapping": FinlandOrFailure}
