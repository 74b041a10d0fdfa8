import CDMigrate

/// A model as a Graphviz digraph (`inspect --dot`): one record node per entity with its own
/// attributes and their types, an edge per relationship labelled with its name (and "to-many",
/// "ordered"), and a dashed edge from each sub-entity to its parent.
enum ModelGraph {
    static func dot(_ model: ManagedObjectModel, title: String) -> String {
        var lines = [
            "digraph \(quoted(title)) {",
            "  rankdir=LR;",
            "  node [shape=record, fontname=\"Helvetica\", fontsize=10];",
            "  edge [fontname=\"Helvetica\", fontsize=9];",
        ]
        for entity in model.entitiesInStoreOrder {
            var header = record(entity.name)
            if entity.isAbstract { header += "\\n(abstract)" }
            let attributes = entity.ownAttributes.map { attribute -> String in
                var text = "\(attribute.name): \(attribute.attributeType.rawValue)"
                if !attribute.isOptional { text += " (required)" }
                if attribute.isTransient { text += " (transient)" }
                return record(text) + "\\l"
            }
            lines.append("  \(quoted(entity.name)) [label=\(quoted("{" + header + "|" + attributes.joined() + "}"))];")
        }
        for entity in model.entitiesInStoreOrder {
            for relationship in entity.ownRelationships {
                var label = relationship.name
                if relationship.isToMany { label += relationship.isOrdered ? " (to-many, ordered)" : " (to-many)" }
                let head = relationship.isToMany ? "crow" : "normal"
                lines.append(
                    "  \(quoted(entity.name)) -> \(quoted(relationship.destinationEntityName)) [label=\(quoted(label)), arrowhead=\(head)];"
                )
            }
            if let parent = entity.parentName {
                lines.append(
                    "  \(quoted(entity.name)) -> \(quoted(parent)) [style=dashed, arrowhead=empty, label=\"inherits\"];"
                )
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A DOT double-quoted string.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for c in text {
            switch c {
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out + "\""
    }

    /// Text inside a record label: the characters that structure records are escaped.
    static func record(_ text: String) -> String {
        var out = ""
        for c in text {
            if "{}|<>\\".contains(c) { out += "\\" + String(c) } else { out.append(c) }
        }
        return out
    }
}
