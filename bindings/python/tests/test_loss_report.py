"""The loss report: what a migration did not carry (report.losses, MigrationStep.losses), and
fail_on_unintended_loss, which refuses to hand over a store that lost what its mapping does not declare."""

from __future__ import annotations

import json
import os

import pytest

import cdmigrate


def model(version, post_attributes):
    return {
        "name": "Blog",
        "versionIdentifier": str(version),
        "entities": [
            {
                "name": "Folder",
                "attributes": [{"name": "name", "type": "string", "optional": True}],
                "relationships": [{"name": "posts", "destination": "Post", "inverse": "folder", "toMany": True}],
            },
            {
                "name": "Post",
                "attributes": [{"name": n, "type": "string", "optional": True} for n in post_attributes],
                "relationships": [
                    {"name": "folder", "destination": "Folder", "inverse": "posts", "toMany": False, "optional": True}
                ],
            },
        ],
    }


V1, V2, V3 = (
    model(1, ["title", "color"]),
    model(2, ["title", "color", "subtitle"]),
    model(3, ["title", "hue", "subtitle"]),
)
FOLDER_TO_FOLDER = {
    "name": "FolderToFolder",
    "sourceEntity": "Folder",
    "destinationEntity": "Folder",
    "predicate": "TRUEPREDICATE",
    "attributeMappings": {"name": "$source.name"},
}


def post_to_post(attributes, **extra):
    return {
        "name": "PostToPost",
        "sourceEntity": "Post",
        "destinationEntity": "Post",
        "predicate": "TRUEPREDICATE",
        "attributeMappings": attributes,
        "relationshipMappings": {
            "folder": 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", '
            '"FolderToFolder", $source.folder)'
        },
        **extra,
    }


def make_store(path, posts=1001):
    with cdmigrate.Store.create(cdmigrate.Model.from_json(json.dumps(V1)), path) as store:
        folder = store.insert("Folder", name="Inbox")
        for i in range(posts):
            store.insert("Post", title=f"Post {i}", color="red" if i % 2 else "blue", folder=folder)
        store.save()


def chain_folder(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    for name, document in [
        ("v1.json", V1),
        ("v2.json", V2),
        ("v3.json", V3),
        (
            "v1-to-v2.mapping.json",
            {
                "sourceModel": "v1",
                "destinationModel": "v2",
                "entityMappings": [
                    FOLDER_TO_FOLDER,
                    post_to_post({"title": "$source.title", "color": "$source.color"}),
                ],
            },
        ),
    ]:
        (folder / name).write_text(json.dumps(document))
    return str(folder)


def test_a_chains_inferred_step_that_drops_an_attribute_is_reported(tmp_path):
    store = str(tmp_path / "blog.sqlite")
    make_store(store)
    report = cdmigrate.migrate_store(store, chain_folder(tmp_path), str(tmp_path / "out.sqlite"))
    assert [step.inferred for step in report.steps] == [False, True]
    assert report.steps[0].losses == []
    assert report.steps[1].losses == [
        cdmigrate.Loss(
            "attribute", "Post", 1001, False, property="color", entity_mapping="IEM_Transform_Post", pass_index=0
        )
    ]
    assert report.raw["steps"][1]["report"]["losses"] == [
        {
            "kind": "attribute",
            "entity": "Post",
            "property": "color",
            "entityMapping": "IEM_Transform_Post",
            "pass": 0,
            "count": 1001,
            "intended": False,
        }
    ]


def test_fail_on_unintended_loss_fails_before_the_hand_over(tmp_path):
    store = str(tmp_path / "blog.sqlite")
    make_store(store)
    models = chain_folder(tmp_path)
    out = str(tmp_path / "strict.sqlite")
    with pytest.raises(cdmigrate.MigrationError) as caught:
        cdmigrate.migrate_store(store, models, out, fail_on_unintended_loss=True)
    assert caught.value.code == 134110
    assert "v2 → v3 (inferred): " in str(caught.value)
    assert "Post.color: 1001 values that no property mapping reads" in str(caught.value)
    assert not os.path.exists(out)
    assert sorted(os.listdir(tmp_path)) == ["blog.sqlite", "models"]


def test_a_declared_loss_is_intended_and_passes_a_strict_run(tmp_path):
    store = str(tmp_path / "blog.sqlite")
    make_store(store, posts=5)
    v1, v2 = cdmigrate.Model.from_json(json.dumps(V1)), cdmigrate.Model.from_json(json.dumps(V2))
    undeclared = {"entityMappings": [FOLDER_TO_FOLDER, post_to_post({"title": "$source.title"})]}
    declared = {
        "entityMappings": [
            FOLDER_TO_FOLDER,
            post_to_post({"title": "$source.title"}, userInfo={"cdmigrate.intendedLosses": "color"}),
        ]
    }
    with cdmigrate.MappingModel.from_json(json.dumps(undeclared)) as m, cdmigrate.Migration(v1, v2, m) as migration:
        assert migration.fail_on_unintended_loss is False
        report = migration.run(store, str(tmp_path / "a.sqlite"))
        assert [(loss.kind, loss.property, loss.count, loss.intended) for loss in report.losses] == [
            ("attribute", "color", 5, False)
        ]
        assert report.unintended_losses == report.losses
        migration.fail_on_unintended_loss = True
        with pytest.raises(cdmigrate.MigrationError):
            migration.run(store, str(tmp_path / "b.sqlite"))
        assert not os.path.exists(tmp_path / "b.sqlite")
    with cdmigrate.MappingModel.from_json(json.dumps(declared)) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.fail_on_unintended_loss = True
        report = migration.run(store, str(tmp_path / "c.sqlite"))
        assert report.losses == [
            cdmigrate.Loss("attribute", "Post", 5, True, property="color", entity_mapping="PostToPost", pass_index=0)
        ]
        assert report.unintended_losses == []
        assert report.to_dict()["losses"] == [
            {
                "kind": "attribute",
                "entity": "Post",
                "count": 5,
                "intended": True,
                "property": "color",
                "entity_mapping": "PostToPost",
                "pass_index": 0,
                "policy": None,
            }
        ]
