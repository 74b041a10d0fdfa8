import Foundation
import XCTest

@testable import CDMigrate

/// Inferred mapping models (`MappingModel.inferred(from:to:)`): Core Data's names and expressions,
/// each lightweight-migration rule accepted or refused, and migrations run with them.
final class InferredMappingModelTests: XCTestCase {
    func model(_ version: String, _ entities: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            json: #"{"name": "M", "versionIdentifier": "\#(version)", "entities": [\#(entities)]}"#)
    }

    func infer(_ source: String, _ destination: String) throws -> MappingModel {
        try MappingModel.inferred(from: try model("1", source), to: try model("2", destination))
    }

    /// The problems an inference refuses, as their messages.
    func refusals(_ source: String, _ destination: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> [MigrationError]
    {
        do {
            _ = try infer(source, destination)
            XCTFail("the inference should have been refused", file: file, line: line)
            return []
        } catch let error as MigrationError {
            XCTAssertEqual(error.code, .inferredMappingModel, file: file, line: line)
            XCTAssertEqual(error.code.rawValue, 134190, file: file, line: line)
            XCTAssertFalse(error.underlying.isEmpty, file: file, line: line)
            for problem in error.underlying {
                XCTAssertEqual(problem.code, .inferredMappingModel, file: file, line: line)
            }
            return error.underlying
        }
    }

    static let fetchNote =
        #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "TRUEPREDICATE"), $manager.sourceContext, NO)"#

    // MARK: Entities

    func testAnUnchangedEntityIsCopiedWithCoreDatasExpressions() throws {
        let note =
            #"{"name": "Note", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "inverse": "notes", "toMany": true}]}, {"name": "Tag", "attributes": [{"name": "label", "type": "string"}], "relationships": [{"name": "notes", "destination": "Note", "inverse": "tags", "toMany": true}]}"#
        let mapping = try infer(note, note)
        XCTAssertEqual(mapping.entityMappings.map { $0.name }, ["IEM_Copy_Note", "IEM_Copy_Tag"])
        let copy = try XCTUnwrap(mapping.entityMapping(named: "IEM_Copy_Note"))
        XCTAssertEqual(copy.mappingType, .copy)
        XCTAssertEqual(copy.sourceEntityName, "Note")
        XCTAssertEqual(copy.destinationEntityName, "Note")
        XCTAssertEqual(copy.sourceExpressionText, Self.fetchNote)
        XCTAssertEqual(copy.sourceExpression?.entityName, "Note")
        XCTAssertEqual(
            copy.attributeMapping(named: "title")?.valueExpressionText, #"FUNCTION($source, "valueForKey:", "title")"#)
        XCTAssertNotNil(copy.attributeMapping(named: "title")?.valueExpression)
        XCTAssertEqual(
            copy.relationshipMapping(named: "tags")?.valueExpressionText,
            #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "tags", FUNCTION($source, "valueForKey:", "tags"))"#
        )
        XCTAssertEqual(copy.sourceEntityVersionHash, copy.sourceEntity?.versionHash)
        XCTAssertNotNil(copy.sourceEntity, "the inferred model comes back validated against its models")
        XCTAssertTrue(mapping.warnings.isEmpty, "\(mapping.warnings)")
    }

    func testAddedRemovedAndRenamedEntities() throws {
        let mapping = try infer(
            #"{"name": "Car", "attributes": [{"name": "color", "type": "string"}]}, {"name": "Old", "attributes": [{"name": "x", "type": "string"}]}"#,
            #"{"name": "Automobile", "renamingIdentifier": "Car", "attributes": [{"name": "color", "type": "string"}]}, {"name": "Fresh", "attributes": [{"name": "y", "type": "string", "optional": false}]}"#
        )
        XCTAssertEqual(
            mapping.entityMappings.map { $0.name }, ["IEM_Transform_Automobile", "IEM_Add_Fresh", "IEM_Remove_Old"])
        let renamed = try XCTUnwrap(mapping.entityMapping(named: "IEM_Transform_Automobile"))
        XCTAssertEqual(renamed.mappingType, .transform)
        XCTAssertEqual(renamed.sourceEntityName, "Car")
        XCTAssertEqual(
            renamed.sourceExpressionText, Self.fetchNote.replacingOccurrences(of: "\"Note\"", with: "\"Car\""))
        let added = try XCTUnwrap(mapping.entityMapping(named: "IEM_Add_Fresh"))
        XCTAssertEqual(added.mappingType, .add)
        XCTAssertNil(added.sourceEntityName)
        XCTAssertNil(
            added.sourceExpression, "a new entity has no source instances (its non-optional attribute cannot fail)")
        let removed = try XCTUnwrap(mapping.entityMapping(named: "IEM_Remove_Old"))
        XCTAssertEqual(removed.mappingType, .remove)
        XCTAssertEqual(removed.sourceEntityName, "Old")
        XCTAssertNil(removed.destinationEntityName)
        XCTAssertNil(removed.sourceExpression)
        XCTAssertTrue(mapping.warnings.isEmpty, "\(mapping.warnings)")
    }

    func testAnEntityRenamedAwayFromANameThatANewEntityTakesLeavesTheNewOneAdded() throws {
        let mapping = try infer(
            #"{"name": "A", "attributes": [{"name": "x", "type": "string"}]}"#,
            #"{"name": "B", "renamingIdentifier": "A", "attributes": [{"name": "x", "type": "string"}]}, {"name": "A", "attributes": [{"name": "z", "type": "string"}]}"#
        )
        XCTAssertEqual(mapping.entityMappings.map { $0.name }, ["IEM_Transform_B", "IEM_Add_A"])
        XCTAssertEqual(mapping.entityMapping(named: "IEM_Transform_B")?.sourceEntityName, "A")
    }

    func testTwoEntitiesTakingOneSourceEntityAreRefused() throws {
        let problems = try refusals(
            #"{"name": "A", "attributes": [{"name": "x", "type": "string"}]}"#,
            #"{"name": "B", "renamingIdentifier": "A"}, {"name": "C", "renamingIdentifier": "A"}"#)
        XCTAssertEqual(problems.count, 1)
        XCTAssertTrue(problems[0].message.contains("'B' and 'C' both take source entity 'A'"), problems[0].message)
    }

    // MARK: Attributes

    func testRenamedAddedAndRemovedAttributes() throws {
        let mapping = try infer(
            #"{"name": "Car", "attributes": [{"name": "color", "type": "string"}, {"name": "gone", "type": "string"}]}"#,
            #"{"name": "Car", "attributes": [{"name": "paintColor", "type": "string", "renamingIdentifier": "color"}, {"name": "wheels", "type": "integer16", "optional": false, "default": 4}, {"name": "note", "type": "string"}]}"#
        )
        let car = try XCTUnwrap(mapping.entityMapping(named: "IEM_Transform_Car"))
        XCTAssertEqual(
            car.attributeMappings.map { $0.name }, ["paintColor", "wheels", "note"],
            "one mapping per destination attribute; none for the removed one")
        XCTAssertEqual(
            car.attributeMapping(named: "paintColor")?.valueExpressionText,
            #"FUNCTION($source, "valueForKey:", "color")"#)
        XCTAssertNil(car.attributeMapping(named: "wheels")?.valueExpressionText, "a new attribute keeps its default")
        XCTAssertNil(car.attributeMapping(named: "note")?.valueExpressionText)
    }

    func testARenamingIdentifierKeptAsACanonicalNameAcrossVersions() throws {
        // v2 renamed 'color' to 'tint' (identifier 'color'); v3 renames it again, keeping the identifier.
        let mapping = try infer(
            #"{"name": "Car", "attributes": [{"name": "tint", "type": "string", "renamingIdentifier": "color"}]}"#,
            #"{"name": "Car", "attributes": [{"name": "paint", "type": "string", "renamingIdentifier": "color"}]}"#)
        XCTAssertEqual(
            mapping.entityMappings[0].attributeMapping(named: "paint")?.valueExpressionText,
            #"FUNCTION($source, "valueForKey:", "tint")"#)
    }

    func testOptionalityChanges() throws {
        let source =
            #"{"name": "E", "attributes": [{"name": "a", "type": "string"}, {"name": "b", "type": "string", "optional": false}]}"#
        // Optional → non-optional with a default; non-optional → optional.
        XCTAssertNoThrow(
            try infer(
                source,
                #"{"name": "E", "attributes": [{"name": "a", "type": "string", "optional": false, "default": "none"}, {"name": "b", "type": "string"}]}"#
            ))
        // Optional → non-optional without a default, and a new non-optional attribute without one.
        let problems = try refusals(
            source,
            #"{"name": "E", "attributes": [{"name": "a", "type": "string", "optional": false}, {"name": "b", "type": "string", "optional": false}, {"name": "c", "type": "integer32", "optional": false}]}"#
        )
        XCTAssertEqual(problems.count, 2, "\(problems)")
        XCTAssertTrue(
            problems[0].message.contains("'E.a' becomes non-optional without a default value"), problems[0].message)
        XCTAssertEqual(problems[0].path, "$.entities[0].attributes[0]")
        XCTAssertTrue(
            problems[1].message.contains("new attribute 'E.c' is non-optional and has no default value"),
            problems[1].message)
        XCTAssertEqual(problems[1].path, "$.entities[0].attributes[2]")
    }

    /// The default makes the change inferable; it does not replace nil values, which the mapping
    /// copies: an instance that had none fails validation (1570) naming the attribute.
    func testAnAttributeBecomingNonOptionalKeepsItsValuesAndRefusesNilOnes() throws {
        let scratch = ScratchDirectory()
        let v1 = try model("1", #"{"name": "E", "attributes": [{"name": "a", "type": "string"}]}"#)
        let v2 = try model(
            "2",
            #"{"name": "E", "attributes": [{"name": "a", "type": "string", "optional": false, "default": "none"}]}"#)
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        for (name, values) in [("full", [Value.string("x"), "y"]), ("holey", ["x", .null])] {
            try makeStore(scratch.file("\(name).sqlite"), v1) { store in
                for value in values { try insert(store, "E", ["a": value]) }
            }
        }
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        try manager.migrateStore(from: scratch.file("full.sqlite"), to: scratch.file("full-v2.sqlite"))
        let store = try PersistentStore.open(at: scratch.file("full-v2.sqlite"), model: v2)
        XCTAssertEqual(Set(try fetchAll(store, "E").map { try $0.value(forKey: "a") }), ["x", "y"])
        store.close()
        XCTAssertThrowsError(
            try manager.migrateStore(from: scratch.file("holey.sqlite"), to: scratch.file("holey-v2.sqlite"))
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .validationMissingMandatoryProperty, "\(error)")
            XCTAssertTrue(e?.message.contains("E.a is required but nil") ?? false, "\(error)")
        }
    }

    func testAcceptedTypeChangesKeepEveryValue() throws {
        let accepted: [(AttributeType, AttributeType)] = [
            (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer64),
            (.integer16, .double), (.integer32, .double), (.float, .double),
            // Core Data converts between every numeric type ("numerical type conversion").
            (.integer64, .integer16), (.integer32, .integer16), (.integer64, .double), (.double, .integer64),
            (.double, .float), (.decimal, .double), (.integer64, .float),
            // and between a numeric type and Boolean.
            (.boolean, .integer16), (.integer32, .boolean), (.double, .boolean), (.boolean, .decimal),
        ]
        for (from, to) in accepted {
            let mapping = try infer(
                #"{"name": "E", "attributes": [{"name": "n", "type": "\#(from.rawValue)"}]}"#,
                #"{"name": "E", "attributes": [{"name": "n", "type": "\#(to.rawValue)"}]}"#)
            XCTAssertEqual(
                mapping.entityMappings[0].attributeMapping(named: "n")?.valueExpressionText,
                #"FUNCTION($source, "valueForKey:", "n")"#, "\(from) → \(to)")
        }
    }

    func testRefusedTypeChangesAreAllReportedTogether() throws {
        let refused: [(AttributeType, AttributeType)] = [
            (.string, .integer32), (.integer32, .string), (.date, .double),
            (.boolean, .string), (.string, .uri), (.binary, .transformable), (.uuid, .boolean),
        ]
        let source = refused.enumerated().map { #"{"name": "a\#($0.offset)", "type": "\#($0.element.0.rawValue)"}"# }
            .joined(separator: ", ")
        let destination = refused.enumerated().map {
            #"{"name": "a\#($0.offset)", "type": "\#($0.element.1.rawValue)"}"#
        }.joined(separator: ", ")
        let problems = try refusals(
            #"{"name": "E", "attributes": [\#(source)]}"#, #"{"name": "E", "attributes": [\#(destination)]}"#)
        XCTAssertEqual(problems.count, refused.count, "every refused change is reported, not only the first")
        for (i, (from, to)) in refused.enumerated() where i < problems.count {
            XCTAssertTrue(
                problems[i].message.contains("'E.a\(i)' changes type from \(from.rawValue) to \(to.rawValue)"),
                problems[i].message)
            XCTAssertEqual(problems[i].path, "$.entities[0].attributes[\(i)]")
        }
    }

    func testAPropertyChangingBetweenAttributeAndRelationshipStartsAfresh() throws {
        // Core Data matches attributes with attributes and relationships with relationships.
        let mapping = try infer(
            #"{"name": "E", "attributes": [{"name": "owner", "type": "string"}]}, {"name": "P"}"#,
            #"{"name": "E", "relationships": [{"name": "owner", "destination": "P"}]}, {"name": "P"}"#)
        XCTAssertNil(mapping.entityMappings[0].relationshipMapping(named: "owner")?.valueExpressionText)
        // Non-optional with nothing to fill it, it is refused as any new one is.
        let problems = try refusals(
            #"{"name": "E", "attributes": [{"name": "owner", "type": "string"}]}, {"name": "P"}"#,
            #"{"name": "E", "relationships": [{"name": "owner", "destination": "P", "optional": false}]}, {"name": "P"}"#
        )
        XCTAssertTrue(problems[0].message.contains("new relationship 'E.owner' is non-optional"), problems[0].message)
    }

    // MARK: Relationships

    static let library =
        #"{"name": "Author", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "books", "destination": "Book", "inverse": "author", "toMany": true}]}, {"name": "Book", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "author", "destination": "Author", "inverse": "books"}]}"#

    func testRenamedAndRecardinalisedRelationships() throws {
        // Book.author (to-one) becomes Book.writers (to-many, renamed); Author.books becomes ordered.
        let mapping = try infer(
            Self.library,
            #"{"name": "Author", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "books", "destination": "Book", "inverse": "writers", "toMany": true, "ordered": true}]}, {"name": "Book", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "writers", "destination": "Author", "inverse": "books", "toMany": true, "renamingIdentifier": "author"}]}"#
        )
        XCTAssertEqual(
            mapping.entityMapping(named: "IEM_Transform_Book")?.relationshipMapping(named: "writers")?
                .valueExpressionText,
            #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "author", FUNCTION($source, "valueForKey:", "author"))"#
        )
        let scratch = ScratchDirectory()
        let v1 = try model("1", Self.library)
        let v2 = try model(
            "2",
            #"{"name": "Author", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "books", "destination": "Book", "inverse": "writers", "toMany": true, "ordered": true}]}, {"name": "Book", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "writers", "destination": "Author", "inverse": "books", "toMany": true, "renamingIdentifier": "author"}]}"#
        )
        try makeStore(scratch.file("v1.sqlite"), v1) { store in
            let ann = try insert(store, "Author", ["name": "Ann"])
            for title in ["One", "Two"] {
                try insert(store, "Book", ["title": .string(title), "author": .object(ann)])
            }
            try insert(store, "Book", ["title": "Alone"])
        }
        try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping).migrateStore(
            from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))
        let store = try PersistentStore.open(at: scratch.file("v2.sqlite"), model: v2)
        defer { store.close() }
        let writers = Dictionary(
            try fetchAll(store, "Book").map {
                (try $0.value(forKey: "title").stringValue ?? "?", try $0.value(forKey: "writers").elements.count)
            }, uniquingKeysWith: +)
        XCTAssertEqual(writers, ["One": 1, "Two": 1, "Alone": 0], "each to-one became a to-many of one (or none)")
        let ann = try XCTUnwrap(fetchAll(store, "Author").first)
        XCTAssertEqual(
            Set(try ann.value(forKey: "books").elements.map { try $0.object?.value(forKey: "title") }),
            [.string("One"), .string("Two")])
    }

    func testRelationshipRulesThatCannotBeInferred() throws {
        let problems = try refusals(
            Self.library + #", {"name": "Shelf"}"#,
            #"{"name": "Author", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "books", "destination": "Shelf", "toMany": true}, {"name": "agent", "destination": "Shelf", "optional": false}]}, {"name": "Book", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "author", "destination": "Author", "optional": false}]}, {"name": "Shelf"}"#
        )
        let messages = problems.map { $0.message }
        XCTAssertEqual(messages.count, 3, "\(messages)")
        XCTAssertTrue(
            messages.contains {
                $0.contains("'Author.books' points to 'Shelf', but source relationship 'Author.books' points to 'Book'")
            }, "\(messages)")
        XCTAssertTrue(
            messages.contains { $0.contains("new relationship 'Author.agent' is non-optional") }, "\(messages)")
        XCTAssertTrue(messages.contains { $0.contains("'Book.author' becomes non-optional") }, "\(messages)")
    }

    // MARK: Hierarchies

    func testHierarchyChangesThatCanBeInferred() throws {
        // Source: Item ← Photo (caption on Photo). Destination: new parent Thing above Item, 'title'
        // moved up into Thing, 'caption' moved up from Photo into Item.
        let mapping = try infer(
            #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}]}, {"name": "Photo", "parent": "Item", "attributes": [{"name": "caption", "type": "string"}]}"#,
            #"{"name": "Thing", "abstract": true, "attributes": [{"name": "title", "type": "string"}]}, {"name": "Item", "parent": "Thing", "attributes": [{"name": "caption", "type": "string"}]}, {"name": "Photo", "parent": "Item"}"#
        )
        XCTAssertEqual(
            mapping.entityMappings.map { $0.name }, ["IEM_Add_Thing", "IEM_Transform_Item", "IEM_Transform_Photo"])
        let item = try XCTUnwrap(mapping.entityMapping(named: "IEM_Transform_Item"))
        XCTAssertEqual(
            item.attributeMapping(named: "title")?.valueExpressionText, #"FUNCTION($source, "valueForKey:", "title")"#)
        XCTAssertNil(item.attributeMapping(named: "caption")?.valueExpressionText, "plain items had no caption")
        XCTAssertEqual(
            mapping.entityMapping(named: "IEM_Transform_Photo")?.attributeMapping(named: "caption")?
                .valueExpressionText, #"FUNCTION($source, "valueForKey:", "caption")"#)
        // Removing the parent again: Item stands alone, Thing's mapping removes nothing but its name.
        let back = try MappingModel.inferred(
            from: try model(
                "2",
                #"{"name": "Thing", "attributes": [{"name": "title", "type": "string"}]}, {"name": "Item", "parent": "Thing"}"#
            ),
            to: try model("3", #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}]}"#))
        XCTAssertEqual(back.entityMappings.map { $0.name }, ["IEM_Transform_Item", "IEM_Remove_Thing"])
    }

    func testMergingHierarchiesAndMakingAnEntityAbstractAreRefused() throws {
        let problems = try refusals(
            #"{"name": "Cat", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Dog", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Bird"}"#,
            #"{"name": "Pet", "abstract": true, "attributes": [{"name": "name", "type": "string"}]}, {"name": "Cat", "parent": "Pet"}, {"name": "Dog", "parent": "Pet"}, {"name": "Bird", "abstract": true}"#
        )
        let messages = problems.map { $0.message }
        XCTAssertEqual(messages.count, 2, "\(messages)")
        XCTAssertTrue(
            messages.contains {
                $0.contains(
                    "entity hierarchy 'Pet' merges entities of separate source hierarchies: 'Cat' (from 'Cat' under 'Cat'), 'Dog' (from 'Dog' under 'Dog')"
                )
            }, "\(messages)")
        XCTAssertTrue(messages.contains { $0.contains("entity 'Bird' becomes abstract") }, "\(messages)")
    }

    // MARK: Running inferred mappings

    /// A hierarchy whose shape changes: every source row arrives exactly once, in the right entity,
    /// and a removed sub-entity's rows are not migrated through its parent's mapping.
    func testAnInferredHierarchyMigratesEveryRowExactlyOnce() throws {
        let scratch = ScratchDirectory()
        let v1 = try model(
            "1",
            #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "shelf", "destination": "Shelf", "inverse": "items"}]}, {"name": "Photo", "parent": "Item", "attributes": [{"name": "caption", "type": "string"}]}, {"name": "Draft", "parent": "Item"}, {"name": "Shelf", "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "shelf"}]}"#
        )
        let v2 = try model(
            "2",
            #"{"name": "Thing", "abstract": true, "attributes": [{"name": "title", "type": "string"}]}, {"name": "Item", "parent": "Thing", "attributes": [{"name": "caption", "type": "string"}], "relationships": [{"name": "shelf", "destination": "Shelf", "inverse": "items"}]}, {"name": "Photo", "parent": "Item"}, {"name": "Shelf", "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "shelf"}]}"#
        )
        let source = scratch.file("v1.sqlite")
        try makeStore(source, v1) { store in
            let shelf = try insert(store, "Shelf", [:])
            for i in 0..<3 { try insert(store, "Item", ["title": .string("item\(i)"), "shelf": .object(shelf)]) }
            for i in 0..<2 {
                try insert(
                    store, "Photo",
                    ["title": .string("photo\(i)"), "caption": .string("caption\(i)"), "shelf": .object(shelf)])
            }
            try insert(store, "Draft", ["title": .string("draft"), "shelf": .object(shelf)])
        }
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        XCTAssertEqual(
            mapping.entityMappings.map { $0.name },
            ["IEM_Add_Thing", "IEM_Transform_Item", "IEM_Transform_Photo", "IEM_Copy_Shelf", "IEM_Remove_Draft"])
        XCTAssertNotNil(
            mapping.entityMapping(named: "IEM_Remove_Draft")?.sourceExpression,
            "a removed sub-entity's mapping takes its rows away from its parent's")
        let report = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping).migrateStore(
            from: source, to: scratch.file("v2.sqlite"))
        let taken = Dictionary(report.mappings.map { ($0.entityMappingName, $0.sourceInstances) }, uniquingKeysWith: +)
        XCTAssertEqual(
            taken["IEM_Transform_Item"], 3, "the parent's mapping leaves the photos and the draft to their own mappings"
        )
        XCTAssertEqual(taken["IEM_Transform_Photo"], 2)
        XCTAssertEqual(taken["IEM_Remove_Draft"], 1)
        XCTAssertEqual(report.mappings.first { $0.entityMappingName == "IEM_Remove_Draft" }?.associations, 0)
        // Stage 1 runs as SQL for every mapping that makes instances; the removed draft is read
        // row by row (a mapping without a destination entity has no INSERT to run).
        let byName = Dictionary(report.mappings.map { ($0.entityMappingName, $0) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(
            ["IEM_Transform_Item", "IEM_Transform_Photo", "IEM_Copy_Shelf", "IEM_Remove_Draft"].map {
                byName[$0]?.instancesBySQL
            }, [true, true, true, false])
        XCTAssertEqual(
            ["IEM_Transform_Item", "IEM_Transform_Photo", "IEM_Copy_Shelf"].map { byName[$0]?.relationshipsBySQL },
            [true, true, true], "to-one shelf by UPDATE; to-many items by UPDATE too")
        let store = try PersistentStore.open(at: scratch.file("v2.sqlite"), model: v2)
        defer { store.close() }
        XCTAssertEqual(
            try fetchAll(store, "Item", subentities: false).map { try $0.value(forKey: "title") }.sorted {
                "\($0)" < "\($1)"
            },
            ["item0", "item1", "item2"].map { Value.string($0) })
        let photos = try fetchAll(store, "Photo")
        XCTAssertEqual(
            Set(try photos.map { try $0.value(forKey: "caption") }), [.string("caption0"), .string("caption1")])
        XCTAssertEqual(Set(try photos.map { try $0.value(forKey: "title") }), [.string("photo0"), .string("photo1")])
        XCTAssertEqual(try fetchAll(store, "Thing").count, 5, "five rows, each once; the draft is gone")
        let shelf = try XCTUnwrap(fetchAll(store, "Shelf").first)
        XCTAssertEqual(
            try shelf.value(forKey: "items").elements.count, 5,
            "the shelf keeps its items and photos, not the removed draft")
        for item in try fetchAll(store, "Item") { XCTAssertFalse(try item.value(forKey: "shelf").isNull) }
    }

    static let booksV1 =
        #"{"name": "Author", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "books", "destination": "Book", "inverse": "author", "toMany": true}]}, {"name": "Book", "attributes": [{"name": "title", "type": "string"}, {"name": "pages", "type": "integer16"}, {"name": "draft", "type": "boolean"}], "relationships": [{"name": "author", "destination": "Author", "inverse": "books"}]}"#
    static let booksV2 =
        #"{"name": "Writer", "renamingIdentifier": "Author", "attributes": [{"name": "fullName", "type": "string", "renamingIdentifier": "name"}], "relationships": [{"name": "works", "destination": "Volume", "inverse": "writer", "toMany": true, "renamingIdentifier": "books"}]}, {"name": "Volume", "renamingIdentifier": "Book", "attributes": [{"name": "heading", "type": "string", "renamingIdentifier": "title"}, {"name": "pages", "type": "integer32"}, {"name": "isbn", "type": "string"}], "relationships": [{"name": "writer", "destination": "Writer", "inverse": "works", "renamingIdentifier": "author"}]}"#

    func makeBooks(_ path: String, _ v1: ManagedObjectModel) throws {
        try makeStore(path, v1) { store in
            let ann = try insert(store, "Author", ["name": "Ann"])
            let bo = try insert(store, "Author", ["name": "Bo"])
            try insert(store, "Book", ["title": "One", "pages": 120, "draft": .bool(false), "author": .object(ann)])
            try insert(store, "Book", ["title": "Two", "pages": 300, "draft": .bool(true), "author": .object(ann)])
            try insert(store, "Book", ["title": "Three", "pages": 32000, "author": .object(bo)])
            try insert(store, "Book", ["title": "Orphan", "pages": 1])
        }
    }

    func checkBooks(_ path: String, _ v2: ManagedObjectModel, heading: (String) -> String = { $0 }) throws {
        let store = try PersistentStore.open(at: path, model: v2)
        defer { store.close() }
        var pagesByHeading: [String: Value] = [:]
        var writerByHeading: [String: Value] = [:]
        for volume in try fetchAll(store, "Volume") {
            let title = try volume.value(forKey: "heading").stringValue ?? "?"
            pagesByHeading[title] = try volume.value(forKey: "pages")
            writerByHeading[title] = try volume.value(forKeyPath: "writer.fullName")
            XCTAssertTrue(try volume.value(forKey: "isbn").isNull, "a new attribute keeps its (empty) default")
        }
        XCTAssertEqual(
            pagesByHeading, [heading("One"): 120, heading("Two"): 300, heading("Three"): 32000, heading("Orphan"): 1])
        XCTAssertEqual(
            writerByHeading,
            [heading("One"): "Ann", heading("Two"): "Ann", heading("Three"): "Bo", heading("Orphan"): .null])
        let works = Dictionary(
            try fetchAll(store, "Writer").map {
                (try $0.value(forKey: "fullName").stringValue ?? "?", try $0.value(forKey: "works").elements.count)
            }, uniquingKeysWith: +)
        XCTAssertEqual(works, ["Ann": 2, "Bo": 1])
    }

    func testAMigrationWithRenamesRunsAsSQLWhereItCan() throws {
        let scratch = ScratchDirectory()
        let v1 = try model("1", Self.booksV1)
        let v2 = try model("2", Self.booksV2)
        try makeBooks(scratch.file("v1.sqlite"), v1)
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        XCTAssertEqual(mapping.entityMappings.map { $0.name }, ["IEM_Transform_Writer", "IEM_Transform_Volume"])
        let report = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping).migrateStore(
            from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))
        try checkBooks(scratch.file("v2.sqlite"), v2)
        // Stage 1 of both mappings is one INSERT … SELECT; stage 2 of Volume.writer (a to-one in a
        // column) is one UPDATE; so is Writer.works, a to-many kept in the volumes' column.
        let counts = Dictionary(report.mappings.map { ($0.entityMappingName, $0) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(counts["IEM_Transform_Writer"]?.instancesBySQL, true)
        XCTAssertEqual(counts["IEM_Transform_Volume"]?.instancesBySQL, true)
        XCTAssertEqual(counts["IEM_Transform_Volume"]?.relationshipsBySQL, true)
        XCTAssertEqual(counts["IEM_Transform_Writer"]?.relationshipsBySQL, true)
        XCTAssertTrue(report.untakenSourceInstances.isEmpty, "\(report.untakenSourceInstances)")
    }

    func testAnInferredMappingRoundTripsThroughJSONAndCanBeEdited() throws {
        let scratch = ScratchDirectory()
        let v1 = try model("1", Self.booksV1)
        let v2 = try model("2", Self.booksV2)
        let inferred = try MappingModel.inferred(from: v1, to: v2)
        let text = inferred.jsonText()
        let read = try MappingModel(json: text)
        XCTAssertEqual(read.jsonText(), text, "written, read and written again: the same text")
        XCTAssertEqual(read.name, inferred.name)
        XCTAssertEqual(read.entityMappings.map { $0.mappingType }, [.transform, .transform])
        XCTAssertEqual(read.entityMappings[1].attributeMapping(named: "isbn")?.valueExpressionText, nil)
        XCTAssertEqual(read.entityMappings[1].sourceEntityVersionHash, v1.entity(named: "Book")?.versionHash)
        XCTAssertEqual(
            read.entityMappings[1].destinationEntitySnapshot,
            EntityMapping.snapshot(of: try XCTUnwrap(v2.entity(named: "Volume"))))
        XCTAssertNoThrow(try read.validate(sourceModel: v1, destinationModel: v2))
        let parsed = try JSON.parse(text)
        XCTAssertEqual(
            parsed["entityMappings"]?.arrayValue?.first?["sourceExpression"]?.stringValue,
            Self.fetchNote.replacingOccurrences(of: "\"Note\"", with: "\"Author\""))

        // Infer, then edit the one entity that needs custom work: headings in capitals.
        let edited = text.replacingOccurrences(
            of: #"FUNCTION($source, \"valueForKey:\", \"title\")"#,
            with: #"FUNCTION($source.title, \"uppercaseString\")"#)
        XCTAssertNotEqual(edited, text)
        try makeBooks(scratch.file("v1.sqlite"), v1)
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel(json: edited))
        try manager.migrateStore(from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))
        try checkBooks(scratch.file("v2.sqlite"), v2, heading: { $0.uppercased() })
    }

    func testAMappingWrittenAsJSONKeepsPoliciesUserInfoAndPredicates() throws {
        let text =
            #"{"name": "M", "entityMappings": [{"name": "AToA", "type": "custom", "sourceEntity": "A", "destinationEntity": "A", "predicate": "x > 1", "policy": "P", "userInfo": {"k": "v"}, "attributeMappings": [{"name": "x", "valueExpression": "$source.x", "userInfo": {"u": "w"}}]}]}"#
        let model = try MappingModel(json: text)
        let again = try MappingModel(json: model.jsonText(indent: 0))
        let mapping = try XCTUnwrap(again.entityMappings.first)
        XCTAssertEqual(mapping.mappingType, .custom)
        XCTAssertEqual(mapping.sourceExpressionText, "x > 1")
        XCTAssertEqual(mapping.sourceExpression, model.entityMappings[0].sourceExpression)
        XCTAssertEqual(mapping.entityMigrationPolicyClassName, "P")
        XCTAssertEqual(mapping.userInfo, ["k": "v"])
        XCTAssertEqual(mapping.attributeMappings.first?.userInfo, ["u": "w"])
        XCTAssertFalse(model.jsonText(indent: 0).contains("\n"))
    }

    // MARK: Real models

    /// The renames stores written by Core Data: infer each step v1.0.0 → v1.1.0 → v1.1.2 → v1.2.0 →
    /// v2.0.0 and migrate a copy of the v1.0.0 store through all of them.
    func testTheRenamesStoreMigratesStepByStepThroughInferredMappings() throws {
        let scratch = ScratchDirectory()
        let fixture = TestPaths.fixtures + "/apple-stores/renames/Example_v1.0.0.sqlite"
        guard FileManager.default.fileExists(atPath: fixture) else { return XCTFail("fixture \(fixture) is missing") }
        var path = scratch.file("Example_v1.0.0.sqlite")
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: fixture + suffix) {
            try FileManager.default.copyItem(atPath: fixture + suffix, toPath: path + suffix)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path + suffix)
        }
        let versions = ["1.0.0", "1.1.0", "1.1.2", "1.2.0", "2.0.0"]
        func load(_ version: String) throws -> ManagedObjectModel {
            try ManagedObjectModel(contentsOf: TestPaths.fixtures + "/json-models/renames-v\(version).json")
        }
        for (from, to) in zip(versions, versions.dropFirst()) {
            let source = try load(from)
            let destination = try load(to)
            let mapping = try MappingModel.inferred(from: source, to: destination)
            let entity = try XCTUnwrap(mapping.entityMappings.first)
            XCTAssertEqual(mapping.entityMappings.count, 1)
            XCTAssertEqual(
                entity.name, "IEM_Transform_BasicEntity", "\(from) → \(to): Apple's hashes differ, the entity changed")
            let old = "v" + from.replacingOccurrences(of: ".", with: "_") + "_name"
            let new = "v" + to.replacingOccurrences(of: ".", with: "_") + "_name"
            XCTAssertEqual(
                entity.attributeMapping(named: new)?.valueExpressionText,
                #"FUNCTION($source, "valueForKey:", "\#(old)")"#)
            let next = scratch.file("Example_v\(to).sqlite")
            let report = try MigrationManager(sourceModel: source, destinationModel: destination, mappingModel: mapping)
                .migrateStore(from: path, to: next)
            XCTAssertEqual(report.mappings.first?.sourceInstances, 1, "\(from) → \(to)")
            path = next
        }
        let model = try load("2.0.0")
        let store = try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: true)
        defer { store.close() }
        let objects = try fetchAll(store, "BasicEntity")
        XCTAssertEqual(objects.count, 1)
        XCTAssertEqual(try objects.first?.value(forKey: "v2_0_0_name"), .string("A Known Value"))
        XCTAssertEqual(
            store.metadata.versionHashes["BasicEntity"], model.entity(named: "BasicEntity")?.versionHash,
            "the result carries v2.0.0's (Apple's) hash")
    }

    /// UnCloudNotes v1 → v2 (reference migration 4): the mapping written out in the example is what
    /// Core Data infers; the inferred one takes the same values from the same places, and both
    /// migrate a store to the same rows.
    func testUnCloudNotesV1ToV2IsWhatTheExampleWroteOut() throws {
        let folder = TestPaths.repository + "/examples/4-uncloudnotes/"
        let v1 = try ManagedObjectModel(contentsOf: folder + "UnCloudNotes_v1.model.json")
        let v2 = try ManagedObjectModel(contentsOf: folder + "UnCloudNotes_v2.model.json")
        let written = try MappingModel(contentsOf: folder + "UnCloudNotes_v1_to_v2.mapping.json")
        let inferred = try MappingModel.inferred(from: v1, to: v2)
        XCTAssertEqual(
            inferred.entityMappings.map { $0.name }, ["IEM_Transform_Note"],
            "Note gained 'image', so Core Data calls it a transform")
        func sourceKey(_ expression: ValueExpression?) -> String? {
            switch expression {
            case .keyPath(.variable("source"), let keys)?: return keys.joined(separator: ".")
            case .function(.variable("source"), "valueForKey:", let arguments)?:
                return arguments.first?.constantValue?.stringValue
            default: return nil
            }
        }
        func shape(_ model: MappingModel) -> [String] {
            model.entityMappings.map { m in
                let attributes = m.attributeMappings.compactMap { p in
                    p.valueExpression.map { _ in "\(p.name)←\(sourceKey(p.valueExpression) ?? "?")" }
                }.sorted()
                return
                    "\(m.sourceEntityName ?? "-")→\(m.destinationEntityName ?? "-") [\(m.sourceExpression?.predicate.description ?? "")] \(attributes.joined(separator: ", "))"
            }
        }
        XCTAssertEqual(shape(inferred), shape(written))
        XCTAssertEqual(
            shape(inferred),
            ["Note→Note [TRUEPREDICATE] body←body, dateCreated←dateCreated, displayIndex←displayIndex, title←title"])
        XCTAssertNil(inferred.entityMappings[0].attributeMapping(named: "image")?.valueExpression)

        let scratch = ScratchDirectory()
        try makeStore(scratch.file("v1.sqlite"), v1) { store in
            for i in 0..<4 {
                try insert(
                    store, "Note",
                    [
                        "title": .string("t\(i)"), "body": .string("b\(i)"), "displayIndex": .integer(Int64(i)),
                        "dateCreated": i == 2 ? .null : .date(Double(1_000 * i)),
                    ])
            }
        }
        var rows: [[String]] = []
        for (name, mapping) in [("written", written), ("inferred", inferred)] {
            let out = scratch.file("\(name).sqlite")
            try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping).migrateStore(
                from: scratch.file("v1.sqlite"), to: out)
            let store = try PersistentStore.open(at: out, model: v2)
            rows.append(
                try fetchAll(store, "Note").map { note in
                    try ["title", "body", "displayIndex", "dateCreated", "image"].map {
                        "\(try note.value(forKey: $0))"
                    }.joined(separator: "|")
                }.sorted())
            store.close()
        }
        XCTAssertEqual(rows[0].count, 4)
        XCTAssertEqual(rows[0], rows[1])
    }
}
