import Foundation
import XCTest

@testable import CDMigrate

/// Steps done as schema changes on a copy of the source file (`SchemaStepPlan`,
/// `MigrationManager+SchemaStep`): which steps are eligible, and that an eligible step gives,
/// table by table and row by row, the store and report the general path gives.
final class SchemaStepTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    static let folder =
        #"{"name": "Folder", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]}"#
    static let old = #"{"name": "Old", "attributes": [{"name": "junk", "type": "string"}]}"#
    /// Version 1: notes in folders, an entity that goes away.
    static let v1 = """
        {"name": "Notes", "versionIdentifier": "1", "entities": [
          {"name": "Note", "attributes": [
             {"name": "title", "type": "string", "indexed": true},
             {"name": "body", "type": "string"},
             {"name": "count", "type": "integer32"},
             {"name": "when", "type": "date"},
             {"name": "obsolete", "type": "string"}],
           "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes"}]},
          \(folder), \(old)]}
        """
    /// Version 2: `body` renamed `text`, `obsolete` dropped, `extra` (optional) and `priority`
    /// (default 3) added, `count` indexed, `Folder` renamed `Group`, `Old` removed, `Album` new
    /// (which moves the entity numbers).
    static let v2 = """
        {"name": "Notes", "versionIdentifier": "2", "entities": [
          {"name": "Album", "attributes": [{"name": "label", "type": "string"}]},
          {"name": "Note", "attributes": [
             {"name": "title", "type": "string", "indexed": true},
             {"name": "text", "type": "string", "renamingIdentifier": "body"},
             {"name": "count", "type": "integer32", "indexed": true},
             {"name": "when", "type": "date"},
             {"name": "extra", "type": "string"},
             {"name": "priority", "type": "integer16", "default": 3}],
           "relationships": [{"name": "folder", "destination": "Group", "inverse": "notes"}]},
          {"name": "Group", "renamingIdentifier": "Folder", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]}]}
        """

    func model(_ json: String) throws -> ManagedObjectModel { try ManagedObjectModel(json: json) }

    /// A version-1 store: `notes` notes over 3 folders (one note without), a few `Old` rows.
    func makeSource(
        _ name: String = "source.sqlite", notes: Int = 40, body: (PersistentStore) throws -> Void = { _ in }
    ) throws -> String {
        let path = scratch.file(name)
        try makeStore(path, try model(Self.v1)) { store in
            let folders = try (0..<3).map { try insert(store, "Folder", ["name": .string("folder \($0)")]) }
            for i in 0..<notes {
                let note = try insert(
                    store, "Note",
                    [
                        "title": .string("Note \(i)"), "body": i % 5 == 0 ? .null : .string("Body \(i)"),
                        "count": .integer(Int64(i * 7)),
                        "when": .date(Double(i) * 3600), "obsolete": i % 2 == 0 ? .string("gone \(i)") : .null,
                    ])
                if i != 3 { try note.setValue(.object(folders[i % 3]), forKey: "folder") }
            }
            for i in 0..<2 { try insert(store, "Old", ["junk": .string("junk \(i)")]) }
            try body(store)
        }
        return path
    }

    func inferredManager(_ source: String = v1, _ destination: String = v2, schemaChanges: Bool) throws
        -> MigrationManager
    {
        let s = try model(source)
        let d = try model(destination)
        let manager = try MigrationManager(
            sourceModel: s, destinationModel: d, mappingModel: try MappingModel.inferred(from: s, to: d))
        manager.triesSchemaChanges = schemaChanges
        return manager
    }

    // MARK: Eligibility

    func plan(_ source: String, _ destination: String, mapping: MappingModel? = nil) throws -> SchemaStepPlan.Outcome {
        let s = try model(source)
        let d = try model(destination)
        let m =
            try mapping.map { try $0.validate(sourceModel: s, destinationModel: d) }
            ?? MappingModel.inferred(from: s, to: d)
        return SchemaStepPlan.make(sourceLayout: StoreLayout(model: s), destinationModel: d, mappingModels: [m])
    }

    func changes(_ source: String, _ destination: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> [SchemaStepPlan.Change]
    {
        switch try plan(source, destination) {
        case .eligible(let plan): return plan.changes
        case .notEligible(let reason):
            XCTFail("not eligible: \(reason)", file: file, line: line)
            return []
        }
    }

    func reason(
        _ source: String, _ destination: String, mapping: MappingModel? = nil, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> String {
        switch try plan(source, destination, mapping: mapping) {
        case .eligible(let plan):
            XCTFail("eligible: \(plan.changes.map { $0.summary })", file: file, line: line)
            return ""
        case .notEligible(let reason): return reason
        }
    }

    static func entities(_ list: String) -> String {
        #"{"name": "M", "versionIdentifier": "x", "entities": [\#(list)]}"#
    }
    static let note =
        #"{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "n", "type": "integer32"}]}"#

    func testAnUnchangedModelNeedsNoChange() throws {
        XCTAssertEqual(try changes(Self.entities(Self.note), Self.entities(Self.note)), [])
    }

    func testARenamedAttributeIsAColumnRename() throws {
        let renamed =
            #"{"name": "Note", "attributes": [{"name": "heading", "type": "string", "renamingIdentifier": "title"}, {"name": "n", "type": "integer32"}]}"#
        XCTAssertEqual(
            try changes(Self.entities(Self.note), Self.entities(renamed)),
            [.renameColumn(table: "ZNOTE", from: "ZTITLE", to: "ZHEADING")])
    }

    func testAddedOptionalAndDefaultedAttributesAreAddedColumns() throws {
        let added =
            #"{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "n", "type": "integer32"}, {"name": "extra", "type": "string"}, {"name": "rank", "type": "integer16", "default": 3}, {"name": "tag", "type": "string", "optional": false, "default": "it's"}]}"#
        XCTAssertEqual(
            try changes(Self.entities(Self.note), Self.entities(added)),
            [
                .addColumn(table: "ZNOTE", column: "ZEXTRA", type: "VARCHAR", defaultSQL: nil),
                .addColumn(table: "ZNOTE", column: "ZRANK", type: "INTEGER", defaultSQL: "3"),
                .addColumn(table: "ZNOTE", column: "ZTAG", type: "VARCHAR", defaultSQL: "'it''s'"),
            ])
    }

    func testADroppedAttributeIsADroppedColumn() throws {
        let dropped = #"{"name": "Note", "attributes": [{"name": "title", "type": "string"}]}"#
        XCTAssertEqual(
            try changes(Self.entities(Self.note), Self.entities(dropped)), [.dropColumn(table: "ZNOTE", column: "ZN")])
    }

    func testRenamedNewAndRemovedEntitiesAndShiftedNumbers() throws {
        let changes = try changes(Self.v1, Self.v2)
        XCTAssertTrue(changes.contains(.dropTable("ZOLD")), "\(changes)")
        XCTAssertTrue(changes.contains(.renameTable(from: "ZFOLDER", to: "ZGROUP")), "\(changes)")
        XCTAssertTrue(changes.contains(.renameColumn(table: "ZNOTE", from: "ZBODY", to: "ZTEXT")), "\(changes)")
        XCTAssertTrue(changes.contains(.dropColumn(table: "ZNOTE", column: "ZOBSOLETE")), "\(changes)")
        XCTAssertTrue(
            changes.contains { if case .createTable("ZALBUM", _) = $0 { return true } else { return false } },
            "\(changes)")
        // Album 1, Group 2, Note 3 where Folder was 1, Note 2.
        XCTAssertTrue(changes.contains(.renumberEntity(table: "ZNOTE", from: 2, to: 3)), "\(changes)")
        XCTAssertTrue(changes.contains(.renumberEntity(table: "ZGROUP", from: 1, to: 2)), "\(changes)")
    }

    func testSwappedColumnNamesGoThroughTemporaryNames() throws {
        let swapped =
            #"{"name": "Note", "attributes": [{"name": "n", "type": "string", "renamingIdentifier": "title"}, {"name": "title", "type": "integer32", "renamingIdentifier": "n"}]}"#
        let changes = try changes(Self.entities(Self.note), Self.entities(swapped))
        XCTAssertEqual(
            changes,
            [
                .renameColumn(table: "ZNOTE", from: "ZN", to: "cdm_column_0"),
                .renameColumn(table: "ZNOTE", from: "ZTITLE", to: "cdm_column_1"),
                .renameColumn(table: "ZNOTE", from: "cdm_column_0", to: "ZTITLE"),
                .renameColumn(table: "ZNOTE", from: "cdm_column_1", to: "ZN"),
            ])
    }

    func testATypeChangeIsNotEligible() throws {
        let wider =
            #"{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "n", "type": "integer64"}]}"#
        XCTAssertTrue(
            try reason(Self.entities(Self.note), Self.entities(wider)).contains(
                "changes type from integer32 to integer64"))
    }

    func testANewNonOptionalAttributeWithoutDefaultIsNotEligible() throws {
        let mapping = try MappingModel(
            json:
                """
                {"name": "m", "entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"title": "$source.title", "n": "$source.n"}}]}
                """)
        let required =
            #"{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "n", "type": "integer32"}, {"name": "must", "type": "string", "optional": false}]}"#
        XCTAssertTrue(
            try reason(Self.entities(Self.note), Self.entities(required), mapping: mapping).contains(
                "non-optional and has no default"))
    }

    func testAPolicyOrACustomExpressionIsNotEligible() throws {
        let withPolicy = try MappingModel(
            json:
                """
                {"name": "m", "entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                  "policy": "MyPolicy", "attributeMappings": {"title": "$source.title", "n": "$source.n"}}]}
                """)
        XCTAssertTrue(
            try reason(Self.entities(Self.note), Self.entities(Self.note), mapping: withPolicy).contains(
                "has the policy 'MyPolicy'"))
        let computed = try MappingModel(
            json:
                """
                {"name": "m", "entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"title": "$source.title", "n": "$source.n + 1"}}]}
                """)
        XCTAssertTrue(
            try reason(Self.entities(Self.note), Self.entities(Self.note), mapping: computed).contains(
                "other than a copy"))
        let filtered = try MappingModel(
            json:
                """
                {"name": "m", "entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "n > 3",
                  "attributeMappings": {"title": "$source.title", "n": "$source.n"}}]}
                """)
        XCTAssertTrue(
            try reason(Self.entities(Self.note), Self.entities(Self.note), mapping: filtered).contains("predicate"))
    }

    func testAPlainCopyMappingWrittenByHandIsEligible() throws {
        let mapping = try MappingModel(
            json:
                """
                {"name": "m", "entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"heading": "$source.title", "n": "FUNCTION($source, \\"valueForKey:\\", \\"n\\")"}}]}
                """)
        let renamed =
            #"{"name": "Note", "attributes": [{"name": "heading", "type": "string"}, {"name": "n", "type": "integer32"}]}"#
        guard case .eligible(let plan) = try plan(Self.entities(Self.note), Self.entities(renamed), mapping: mapping)
        else { return XCTFail("not eligible") }
        XCTAssertEqual(plan.changes, [.renameColumn(table: "ZNOTE", from: "ZTITLE", to: "ZHEADING")])
    }

    func testHierarchiesManyToManysOrderedOneToOnesAndExternalDataAreNotEligible() throws {
        let hierarchy =
            #"{"name": "Note", "attributes": [{"name": "title", "type": "string"}]}, {"name": "Memo", "parent": "Note", "attributes": [{"name": "x", "type": "string"}]}"#
        XCTAssertTrue(try reason(Self.entities(hierarchy), Self.entities(hierarchy)).contains("hierarchy"))
        let manyToMany =
            #"{"name": "Note", "relationships": [{"name": "tags", "destination": "Tag", "inverse": "notes", "toMany": true}]}, {"name": "Tag", "relationships": [{"name": "notes", "destination": "Note", "inverse": "tags", "toMany": true}]}"#
        XCTAssertTrue(try reason(Self.entities(manyToMany), Self.entities(manyToMany)).contains("many-to-many"))
        let ordered =
            #"{"name": "Note", "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes"}]}, {"name": "Folder", "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true, "ordered": true}]}"#
        XCTAssertTrue(try reason(Self.entities(ordered), Self.entities(ordered)).contains("ordering column"))
        let oneToOne =
            #"{"name": "Note", "relationships": [{"name": "cover", "destination": "Cover", "inverse": "note"}]}, {"name": "Cover", "relationships": [{"name": "note", "destination": "Note", "inverse": "cover"}]}"#
        XCTAssertTrue(try reason(Self.entities(oneToOne), Self.entities(oneToOne)).contains("one-to-one"))
        let external =
            #"{"name": "Note", "attributes": [{"name": "image", "type": "binary", "allowsExternalBinaryDataStorage": true}]}"#
        XCTAssertTrue(try reason(Self.entities(external), Self.entities(external)).contains("external binary data"))
    }

    func testARelationshipSetFromAnotherSourceRelationshipsTargetsIsNotEligible() throws {
        // `folder` is set from the shelf's destination: a look-up, not a copy of the key.
        let source =
            #"{"name": "Note", "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes"}, {"name": "shelf", "destination": "Folder", "inverse": "shelved"}]}, {"name": "Folder", "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}, {"name": "shelved", "destination": "Note", "inverse": "shelf", "toMany": true}]}"#
        let mapping = try MappingModel(
            json:
                """
                {"name": "m", "entityMappings": [
                  {"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                   "relationshipMappings": {"folder": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"FolderToFolder\\", $source.shelf)",
                                            "shelf": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"FolderToFolder\\", $source.shelf)"}},
                  {"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "TRUEPREDICATE"}]}
                """)
        XCTAssertTrue(
            try reason(Self.entities(source), Self.entities(source), mapping: mapping).contains("carried twice"))
    }

    // MARK: Same result as the general path

    /// Everything a store holds, as text: per table its columns (sorted by name) and rows (sorted),
    /// its indexes' shapes, and the bookkeeping tables.
    func dump(_ path: String) throws -> [String: [String]] {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        var result: [String: [String]] = [:]
        for row in try database.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name")
        {
            guard let table = row.first?.text else { continue }
            let columns = try database.rows("SELECT name, type FROM pragma_table_info(?)", [.string(table)]).compactMap
            { r in
                r.first?.text.map { ($0, r.element(at: 1)?.text ?? "") }
            }.sorted { $0.0 < $1.0 }
            result[table + " columns"] = columns.map { "\($0.0) \($0.1)" }
            let list = columns.map { SQLiteDatabase.quote($0.0) }.joined(separator: ", ")
            result[table] = try database.rows("SELECT \(list) FROM \(SQLiteDatabase.quote(table))").map { r in
                r.map { value -> String in
                    switch value {
                    case .null: return "NULL"
                    case .integer(let i): return "int \(i)"
                    case .real(let d): return "real \(d)"
                    case .text(let t): return "text \(t)"
                    case .blob(let b): return "blob \(b)"
                    }
                }.joined(separator: " | ")
            }.sorted()
        }
        for row in try database.rows("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' ORDER BY name") {
            guard let name = row.first?.text else { continue }
            let columns = try database.rows(
                "SELECT name, \"desc\", coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", [.string(name)])
            let unique = try database.scalar(
                "SELECT \"unique\" FROM pragma_index_list(?) WHERE name = ?",
                [.string(row.element(at: 1)?.text ?? ""), .string(name)])?.integer
            result["index " + name] =
                ["\(row.element(at: 1)?.text ?? "") unique \(unique ?? -1)"]
                + columns.map {
                    "\($0.first?.text ?? "") \($0.element(at: 1)?.integer ?? 0) \($0.element(at: 2)?.text ?? "")"
                }
        }
        result["triggers"] = try database.rows(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
        ).map { r in
            r.compactMap { $0.text }.joined(separator: " | ")
        }
        result["integrity_check"] = try database.rows("PRAGMA integrity_check").compactMap { $0.first?.text }
        XCTAssertEqual(result["integrity_check"], ["ok"], path)
        result["journal_mode"] = [try database.scalar("PRAGMA journal_mode")?.text ?? ""]
        result["auto_vacuum"] = ["\(try database.scalar("PRAGMA auto_vacuum")?.integer ?? -1)"]
        return result
    }

    func summary(_ report: MigrationReport) -> [String] {
        report.mappings.map {
            "\($0.pass) \($0.entityMappingName) \($0.sourceInstances) \($0.associations) \($0.instancesBySQL) \($0.relationshipsBySQL)"
        }
            + report.untakenSourceInstances.map { "untaken \($0.entityName) \($0.count)" }
            + report.destinationCounts.map { "count \($0.entityName) \($0.count)" }
            + report.warnings.map { "warning \($0)" }
            + report.losses.losses.map { "loss \($0)" }
    }

    func assertSameStores(_ a: String, _ b: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let x = try dump(a)
        let y = try dump(b)
        XCTAssertEqual(Set(x.keys), Set(y.keys), file: file, line: line)
        for key in x.keys.sorted() where x[key] != y[key] {
            XCTFail("\(key) differs: \(x[key]?.prefix(5) ?? []) vs \(y[key]?.prefix(5) ?? [])", file: file, line: line)
        }
    }

    func testAnInferredStepAsSchemaChangesGivesTheGeneralPathsStoreAndReport() throws {
        let source = try makeSource()
        let before = fileBytes(source)
        let general = try inferredManager(schemaChanges: false).migrateStore(
            from: source, to: scratch.file("general.sqlite"))
        let fast = try inferredManager(schemaChanges: true).migrateStore(from: source, to: scratch.file("fast.sqlite"))
        XCTAssertEqual(fileBytes(source), before, "the source is never written")
        XCTAssertFalse(general.bySchemaChanges)
        XCTAssertTrue(fast.bySchemaChanges, fast.schemaChangesNotDone ?? "")
        XCTAssertTrue(fast.schemaChanges.contains("renamed column ZNOTE.ZBODY to ZTEXT"), "\(fast.schemaChanges)")
        XCTAssertNil(fast.schemaChangesNotDone)
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
        XCTAssertEqual(summary(fast), summary(general))
        // The dropped attribute's values and the removed entity's instances are reported.
        XCTAssertTrue(
            fast.losses.losses.contains { $0.kind == .attribute && $0.propertyName == "obsolete" && $0.count == 20 },
            "\(fast.losses.losses)")
        XCTAssertTrue(
            fast.losses.losses.contains { $0.kind == .instances && $0.entityName == "Old" && $0.count == 2 },
            "\(fast.losses.losses)")
        // The result opens with the destination model and reads as expected.
        let store = try PersistentStore.open(at: scratch.file("fast.sqlite"), model: try model(Self.v2))
        defer { store.close() }
        let notes = try fetchAll(store, "Note")
        XCTAssertEqual(notes.count, 40)
        for note in notes {
            let i = Int(try note.value(forKey: "title").stringValue?.split(separator: " ").last ?? "") ?? -1
            XCTAssertEqual(try note.value(forKey: "text"), i % 5 == 0 ? .null : .string("Body \(i)"))
            XCTAssertEqual(try note.value(forKey: "priority"), .integer(3))
            XCTAssertEqual(try note.value(forKey: "extra"), .null)
            var folderName: Value? = nil
            if case .object(let folder) = try note.value(forKey: "folder") {
                folderName = try folder.value(forKey: "name")
            }
            XCTAssertEqual(folderName, i == 3 ? nil : .string("folder \(i % 3)"))
        }
    }

    func testInPlaceAsSchemaChangesGivesTheGeneralPathsStore() throws {
        let a = try makeSource("a.sqlite")
        let b = scratch.file("b.sqlite")
        try FileManager.default.copyItem(atPath: a, toPath: b)
        let general = try inferredManager(schemaChanges: false).migrateStoreInPlace(at: a)
        let fast = try inferredManager(schemaChanges: true).migrateStoreInPlace(at: b)
        XCTAssertTrue(fast.bySchemaChanges, fast.schemaChangesNotDone ?? "")
        try assertSameStores(a, b)
        XCTAssertEqual(summary(fast), summary(general))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains(".cdmigrate-") }, [],
            "no temporary or lock file is left")
    }

    func testRowsTheGeneralPathWouldChangeSendTheStepToTheGeneralPath() throws {
        // A note whose folder is gone (a dangling key), and a text in an integer column.
        let source = try makeSource()
        let database = try SQLiteDatabase(path: source, mode: .readWrite)
        try database.exec(
            "UPDATE ZNOTE SET ZFOLDER = 999 WHERE Z_PK = 2; UPDATE ZNOTE SET ZCOUNT = 'x7' WHERE Z_PK = 5; UPDATE ZNOTE SET Z_OPT = 4 WHERE Z_PK = 6"
        )
        database.close()
        let general = try inferredManager(schemaChanges: false).migrateStore(
            from: source, to: scratch.file("general.sqlite"))
        let fast = try inferredManager(schemaChanges: true).migrateStore(from: source, to: scratch.file("fast.sqlite"))
        XCTAssertFalse(fast.bySchemaChanges)
        XCTAssertTrue(
            fast.schemaChangesNotDone?.contains("row 2 of table ZNOTE") == true, fast.schemaChangesNotDone ?? "")
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
        XCTAssertEqual(summary(fast), summary(general))
    }

    func testForeignKeysIntoKeysWithGapsAreLookedUpOneByOne() throws {
        // Folder 2 is gone: its notes' keys dangle (the general path drops them), and the
        // folders' keys have a gap, so the range check gives way to a look-up per row.
        let dangling = try makeSource("dangling.sqlite")
        var database = try SQLiteDatabase(path: dangling, mode: .readWrite)
        try database.exec("DELETE FROM ZFOLDER WHERE Z_PK = 2")
        database.close()
        let general = try inferredManager(schemaChanges: false).migrateStore(
            from: dangling, to: scratch.file("general.sqlite"))
        let fast = try inferredManager(schemaChanges: true).migrateStore(
            from: dangling, to: scratch.file("fast.sqlite"))
        XCTAssertFalse(fast.bySchemaChanges)
        XCTAssertTrue(
            fast.schemaChangesNotDone?.contains("of table ZNOTE has a value the general path does not copy") == true,
            fast.schemaChangesNotDone ?? "")
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
        XCTAssertEqual(summary(fast), summary(general))
        // The same gap with the notes moved to folder 3: every key finds its row, the step is done as schema changes.
        let gap = try makeSource("gap.sqlite")
        database = try SQLiteDatabase(path: gap, mode: .readWrite)
        try database.exec("UPDATE ZNOTE SET ZFOLDER = 3 WHERE ZFOLDER = 2; DELETE FROM ZFOLDER WHERE Z_PK = 2")
        database.close()
        let general2 = try inferredManager(schemaChanges: false).migrateStore(
            from: gap, to: scratch.file("general2.sqlite"))
        let fast2 = try inferredManager(schemaChanges: true).migrateStore(from: gap, to: scratch.file("fast2.sqlite"))
        XCTAssertTrue(fast2.bySchemaChanges, fast2.schemaChangesNotDone ?? "")
        try assertSameStores(scratch.file("general2.sqlite"), scratch.file("fast2.sqlite"))
        XCTAssertEqual(summary(fast2), summary(general2))
    }

    func testARollbackJournalSourceIsCopiedAsAFileAndGivesTheSameStore() throws {
        let source = try makeSource()
        let database = try SQLiteDatabase(path: source, mode: .readWrite)
        try database.exec("PRAGMA journal_mode = DELETE")
        database.close()
        let before = fileBytes(source)
        let general = try inferredManager(schemaChanges: false).migrateStore(
            from: source, to: scratch.file("general.sqlite"))
        let fast = try inferredManager(schemaChanges: true).migrateStore(from: source, to: scratch.file("fast.sqlite"))
        XCTAssertTrue(fast.bySchemaChanges, fast.schemaChangesNotDone ?? "")
        XCTAssertEqual(fileBytes(source), before)
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
        XCTAssertEqual(summary(fast), summary(general))
    }

    func testAValueOutOfItsNewRangeSendsTheStepToTheGeneralPathWhichFails() throws {
        // `count` gets a maximum some notes exceed: the scan finds it, the general path reports it.
        let bounded = Self.v2.replacingOccurrences(
            of: #"{"name": "count", "type": "integer32", "indexed": true}"#,
            with: #"{"name": "count", "type": "integer32", "indexed": true, "maxValue": 100}"#)
        let source = try makeSource()
        var errors: [MigrationError] = []
        for (tries, name) in [(false, "general.sqlite"), (true, "fast.sqlite")] {
            XCTAssertThrowsError(
                try inferredManager(Self.v1, bounded, schemaChanges: tries).migrateStore(
                    from: source, to: scratch.file(name))
            ) { error in
                if let error = error as? MigrationError { errors.append(error) }
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file(name)))
        }
        XCTAssertEqual(errors.count, 2)
        XCTAssertEqual(errors.first?.code, errors.last?.code)
        // The same message but for the store's UUID in the object URIs (each run has its own).
        let withoutUUIDs = errors.map {
            $0.message.replacingOccurrences(
                of: "x-coredata://[^/]+/", with: "x-coredata://UUID/", options: .regularExpression)
        }
        XCTAssertEqual(withoutUUIDs.first, withoutUUIDs.last)
        XCTAssertTrue(
            withoutUUIDs.first?.contains("Note.count is above its maximum 100 in 25 instances") == true,
            withoutUUIDs.first ?? "")
    }

    func testOtherOptimisticLockingValuesAreResetAsTheGeneralPathResetsThem() throws {
        let source = try makeSource()
        let database = try SQLiteDatabase(path: source, mode: .readWrite)
        try database.exec("UPDATE ZNOTE SET Z_OPT = 4 WHERE Z_PK % 3 = 0")
        database.close()
        try inferredManager(schemaChanges: false).migrateStore(from: source, to: scratch.file("general.sqlite"))
        let fast = try inferredManager(schemaChanges: true).migrateStore(from: source, to: scratch.file("fast.sqlite"))
        XCTAssertTrue(fast.bySchemaChanges, fast.schemaChangesNotDone ?? "")
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
    }

    /// The scan counts every row and the rows that matter in one pass, to the table's end: a
    /// row that matters is found when it is the last one, and the counts are the general path's.
    func testTheLastRowAloneIsFoundByTheOnePassScan() throws {
        let source = try makeSource()
        var database = try SQLiteDatabase(path: source, mode: .readWrite)
        let last = try XCTUnwrap(try database.scalar("SELECT MAX(Z_PK) FROM ZNOTE")?.integer)
        try database.exec("UPDATE ZNOTE SET Z_OPT = 7 WHERE Z_PK = \(last)")
        database.close()
        let general = try inferredManager(schemaChanges: false).migrateStore(
            from: source, to: scratch.file("general.sqlite"))
        let fast = try inferredManager(schemaChanges: true).migrateStore(from: source, to: scratch.file("fast.sqlite"))
        XCTAssertTrue(fast.bySchemaChanges, fast.schemaChangesNotDone ?? "")
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
        XCTAssertEqual(summary(fast), summary(general))
        // Another entity number in the last row alone sends the step to the general path, which
        // refuses the row (a step done as schema changes would have carried it).
        database = try SQLiteDatabase(path: source, mode: .readWrite)
        try database.exec("UPDATE ZNOTE SET Z_OPT = 1, Z_ENT = 99 WHERE Z_PK = \(last)")
        database.close()
        XCTAssertThrowsError(
            try inferredManager(schemaChanges: true).migrateStore(from: source, to: scratch.file("odd.sqlite"))
        ) { error in
            XCTAssertTrue("\(error)".contains("row \(last) of table 'ZNOTE'"), "\(error)")
        }
    }

    func testAHandWrittenCopyMappingAsSchemaChangesGivesTheGeneralPathsStore() throws {
        let note =
            #"{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "n", "type": "integer32"}]}"#
        let renamed =
            #"{"name": "Note", "attributes": [{"name": "heading", "type": "string"}, {"name": "n", "type": "integer32"}]}"#
        let mapping = try MappingModel(
            json:
                """
                {"name": "m", "entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"heading": "$source.title", "n": "$source.n"}}]}
                """)
        let s = try model(Self.entities(note))
        let d = try model(Self.entities(renamed).replacingOccurrences(of: "\"x\"", with: "\"y\""))
        let source = scratch.file("source.sqlite")
        try makeStore(source, s) { store in
            for i in 0..<25 { try insert(store, "Note", ["title": .string("t\(i)"), "n": .integer(Int64(i))]) }
        }
        var reports: [MigrationReport] = []
        for (tries, name) in [(false, "general.sqlite"), (true, "fast.sqlite")] {
            let manager = try MigrationManager(sourceModel: s, destinationModel: d, mappingModel: mapping)
            manager.triesSchemaChanges = tries
            reports.append(try manager.migrateStore(from: source, to: scratch.file(name)))
        }
        XCTAssertTrue(reports[1].bySchemaChanges, reports[1].schemaChangesNotDone ?? "")
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
        XCTAssertEqual(summary(reports[1]), summary(reports[0]))
    }

    func testDerivedAttributesGetTheGeneralPathsValuesAndTriggers() throws {
        // The source has Core Data's triggers for its derived attributes; the destination renames
        // an attribute they read and derives others.
        let list1 =
            #"{"name": "List", "attributes": [{"name": "name", "type": "string"}, {"name": "shout", "type": "string", "derivationExpression": "uppercase:(name)"}, {"name": "itemCount", "type": "int64", "derivationExpression": "items.@count"}], "relationships": [{"name": "items", "destination": "Item", "inverse": "list", "toMany": true}]}"#
        let item1 =
            #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "price", "type": "double"}], "relationships": [{"name": "list", "destination": "List", "inverse": "items"}]}"#
        let list2 =
            #"{"name": "List", "attributes": [{"name": "label", "type": "string", "renamingIdentifier": "name"}, {"name": "shout", "type": "string", "derivationExpression": "uppercase:(label)"}, {"name": "itemCount", "type": "int64", "derivationExpression": "items.@count"}, {"name": "total", "type": "double", "derivationExpression": "items.price.@sum"}], "relationships": [{"name": "items", "destination": "Item", "inverse": "list", "toMany": true}]}"#
        let item2 =
            #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "price", "type": "double"}, {"name": "listName", "type": "string", "derivationExpression": "list.label"}], "relationships": [{"name": "list", "destination": "List", "inverse": "items"}]}"#
        let v1 = Self.entities([list1, item1].joined(separator: ", "))
        let v2 = Self.entities([list2, item2].joined(separator: ", ")).replacingOccurrences(of: "\"x\"", with: "\"y\"")
        let source = scratch.file("lists.sqlite")
        let s = try model(v1)
        try makeStore(source, s) { store in
            for l in 0..<4 {
                let list = try insert(store, "List", ["name": .string("list \(l)")])
                let items = try (0..<l).map {
                    try insert(store, "Item", ["title": .string("item \($0)"), "price": .double(Double($0) + 0.5)])
                }
                try list.setValue(.collection(items.map { .object($0) }), forKey: "items")
            }
        }
        var reports: [MigrationReport] = []
        for (tries, name) in [(false, "general.sqlite"), (true, "fast.sqlite")] {
            reports.append(
                try inferredManager(v1, v2, schemaChanges: tries).migrateStore(from: source, to: scratch.file(name)))
        }
        XCTAssertTrue(reports[1].bySchemaChanges, reports[1].schemaChangesNotDone ?? "")
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
        XCTAssertEqual(summary(reports[1]), summary(reports[0]))
        let database = try SQLiteDatabase(path: scratch.file("fast.sqlite"), mode: .readOnly)
        defer { database.close() }
        XCTAssertGreaterThan(
            try database.scalar("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'Z_DA_%'")?
                .integer ?? 0, 0)
        XCTAssertEqual(
            try database.scalar(
                "SELECT ZSHOUT || ' ' || ZITEMCOUNT || ' ' || ZTOTAL FROM ZLIST WHERE ZLABEL = 'list 3'")?.text,
            "LIST 3 3 4.5")
    }

    // MARK: Failures leave everything as it was

    func testACancelledStepLeavesTheSourceAndNoDestination() throws {
        let source = try makeSource()
        let before = fileBytes(source)
        let manager = try inferredManager(schemaChanges: true)
        var calls = 0
        manager.progressHandler = { progress in
            calls += 1
            return progress.fraction < 1
        }
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationCancelled)
        }
        XCTAssertGreaterThan(calls, 1)
        XCTAssertEqual(fileBytes(source), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("out.sqlite")))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains(".cdmigrate-") }, [])
        // In place: the store keeps its bytes.
        let inPlace = try inferredManager(schemaChanges: true)
        inPlace.progressHandler = { $0.fraction < 1 }
        XCTAssertThrowsError(try inPlace.migrateStoreInPlace(at: source))
        XCTAssertEqual(fileBytes(source), before)
    }

    func testAStepThatDoesNotValidateFailsAsTheGeneralPathFails() throws {
        // `when` becomes non-optional with a default: the notes without one fail validation on both paths.
        let required = Self.v2.replacingOccurrences(
            of: #"{"name": "when", "type": "date"}"#,
            with: #"{"name": "when", "type": "date", "optional": false, "default": 0}"#)
        let source = try makeSource { store in try insert(store, "Note", ["title": .string("no date")]) }
        let before = fileBytes(source)
        var errors: [MigrationError] = []
        for tries in [false, true] {
            XCTAssertThrowsError(
                try inferredManager(Self.v1, required, schemaChanges: tries).migrateStoreInPlace(at: source)
            ) { error in
                if let error = error as? MigrationError { errors.append(error) }
            }
        }
        XCTAssertEqual(
            errors.map { $0.code }, [.validationMissingMandatoryProperty, .validationMissingMandatoryProperty])
        XCTAssertEqual(fileBytes(source), before)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains(".cdmigrate-") }, [])
    }
}
