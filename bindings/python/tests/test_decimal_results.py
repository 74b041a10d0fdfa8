"""A host function returning a Decimal fills a decimal attribute exactly."""

import decimal
import json

import pytest
from conftest import copy_mapping, rows

import cdmigrate


def dec_from(selector: str) -> str:
    """The kitchen's copy mapping with the decimal `dec` computed by the host function
    ``Money.<selector>`` of the source's."""
    mapping = json.loads(copy_mapping())
    item = next(m for m in mapping["entityMappings"] if m["name"] == "ItemToItem")
    for attribute in item["attributeMappings"]:
        if attribute["name"] == "dec":
            attribute["valueExpression"] = f'FUNCTION(CAST("Money", "Class"), "{selector}", $source.dec)'
    return json.dumps(mapping)


def test_a_host_function_returns_an_exact_decimal(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    mapping = dec_from("withTax:")
    destination = str(tmp_path / "out.sqlite")
    with cdmigrate.MappingModel.from_json(mapping) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.run(
            kitchen_store,
            destination,
            functions={
                ("Money", "withTax:"): lambda amount: (decimal.Decimal(str(amount)) * decimal.Decimal("1.25")).quantize(
                    decimal.Decimal("0.001")
                )
            },
        )
    values = sorted(row[0] for row in rows(destination, "SELECT ZDEC FROM ZITEM"))
    assert values[0] == pytest.approx(15.625) and values[-1] == pytest.approx((12.5 + 29) * 1.25)


def test_a_decimal_result_that_is_not_finite_is_refused(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    mapping = dec_from("broken:")
    with cdmigrate.MappingModel.from_json(mapping) as m, cdmigrate.Migration(v1, v2, m) as migration:
        with pytest.raises(cdmigrate.MigrationError):
            migration.run(
                kitchen_store,
                str(tmp_path / "out.sqlite"),
                functions={("Money", "broken:"): lambda amount: decimal.Decimal("NaN")},
            )
