#!/usr/bin/env python3
"""Summarises a mapping model compiled by Xcode (`.cdm`, an NSKeyedArchiver binary plist) as JSON:
entity mappings in order with name, type, entities, policy, source expression and property
mappings, each expression written in Core Data's format syntax.

Used to derive Tests/Fixtures/xcode/XcodeServer/*/MappingModel.compiled-summary.json, which the
tests compare with what cdmigrate reads from the `.xcmappingmodel` source of the same mapping.

    python3 scripts/cdm_summary.py MappingModel.cdm_precompiled > MappingModel.compiled-summary.json
"""

import json
import plistlib
import sys

TYPES = {0: "undefined", 1: "custom", 2: "add", 3: "remove", 4: "copy", 5: "transform"}


def main(path):
    with open(path, "rb") as f:
        archive = plistlib.load(f)
    objects = archive["$objects"]

    def obj(x):
        return objects[x.data] if isinstance(x, plistlib.UID) else x

    def absent(x):
        return x is None or obj(x) == "$null"

    def items(x):
        return [] if absent(x) else [obj(i) for i in obj(x)["NS.objects"]]

    def expression(e):
        e = obj(e)
        if e == "$null":
            return None
        kind = obj(e["$class"])["$classname"]
        if kind == "NSVariableExpression":
            return "$" + obj(e["NSVariable"])
        if kind == "NSConstantValueExpression":
            value = obj(e["NSConstantValue"])
            return json.dumps(value) if isinstance(value, str) else repr(value)
        if kind == "NSKeyPathSpecifierExpression":
            return obj(e["NSKeyPath"])
        if kind == "NSKeyPathExpression":
            return expression(e["NSOperand"]) + "." + ".".join(expression(a) for a in items(e["NSArguments"]))
        if kind == "NSFunctionExpression":
            arguments = "".join(", " + expression(a) for a in items(e["NSArguments"]))
            return 'FUNCTION({}, "{}"{})'.format(expression(e["NSOperand"]), obj(e["NSSelectorName"]), arguments)
        if kind == "NSFetchRequestExpression":
            return "FETCH({}, {}, {})".format(
                expression(e["NSFRExpression"]),
                expression(e["NSMOCExpression"]),
                "YES" if e["NSCountOnlyFlag"] else "NO",
            )
        raise ValueError("unsupported expression class " + kind)

    def text(entity_mapping, key):
        value = entity_mapping.get(key)
        return None if absent(value) else obj(value)

    root = obj(archive["$top"]["root"])
    summary = []
    for m in items(root["NSEntityMappings"]):
        summary.append(
            {
                "name": text(m, "NSMappingName"),
                "type": TYPES.get(m["NSMappingType"], str(m["NSMappingType"])),
                "sourceEntity": text(m, "NSSourceEntityName"),
                "destinationEntity": text(m, "NSDestinationEntityName"),
                "policy": text(m, "NSEntityMigrationPolicyClassName"),
                "sourceExpression": None
                if absent(m.get("NSSourceExpression"))
                else expression(m["NSSourceExpression"]),
                "attributeMappings": [
                    [obj(p["NSDestinationPropertyName"]), expression(p["NSValueExpression"])]
                    for p in items(m.get("NSAttributeMappings"))
                ],
                "relationshipMappings": [
                    [obj(p["NSDestinationPropertyName"]), expression(p["NSValueExpression"])]
                    for p in items(m.get("NSRelationshipMappings"))
                ],
            }
        )
    json.dump(summary, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
