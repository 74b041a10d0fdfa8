import CSQLite
import XCTest

@testable import CDMigrate

/// A policy that makes its instances one source row at a time and applies the mapping's attribute
/// mappings to each (`applyAttributeMappings`) gets the destination it got when they were
/// evaluated at once, row for row, whether the values are written by SQL with the insert buffer
/// (`DeferredAttributeMappings`) or computed on first access: the same keys, values, joins,
/// associations and loss report; the same error for a value refused.
final class DeferredAttributeMappingsTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
    }

    /// Each table's rows (but the metadata), ordered, as text with each value's storage class.
    func dump(_ path: String) -> [String] {
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        func rows(_ query: String) -> [String] {
            var statement: OpaquePointer?
            XCTAssertEqual(sqlite3_prepare_v2(db, query, -1, &statement, nil), SQLITE_OK, query)
            defer { sqlite3_finalize(statement) }
            var result: [String] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                result.append(
                    (0..<sqlite3_column_count(statement)).map { i in
                        let type = sqlite3_column_type(statement, i)
                        let text = type == SQLITE_NULL ? "NULL" : String(cString: sqlite3_column_text(statement, i))
                        return text + ":" + ["", "int", "real", "text", "blob", "null"][Int(type)]
                    }.joined(separator: "|"))
            }
            return result
        }
        var result: [String] = []
        for table in rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE') ORDER BY name"
        ) {
            let name = table.components(separatedBy: ":")[0]
            result.append("table \(name)")
            result += rows("SELECT * FROM \"\(name)\" ORDER BY 1, 2")
        }
        return result
    }

    /// Makes the mapping's destination instance per source row, applies the attribute mappings,
    /// then (every `readEvery` rows) reads a value of it, (every `fetchEvery` rows) fetches it from
    /// the destination, and, for the notes, finds or makes the note's category and adds it.
    final class RowsPolicy: EntityMigrationPolicy {
        var readEvery = 0
        var setEvery = 0
        var fetchEvery = 0
        var setBeforeEvery = 0
        /// Every so many rows, the previous row's instance looked up by ID and read (after its hook).
        var readPreviousEvery = 0
        var previous: ObjectID?
        var deferred = 0
        /// The run's writer of put-off values, kept to read its counts after the run.
        var writer: DeferredAttributeMappings?
        var rows = 0
        var read: [String] = []
        var fetched = 0
        var keys: [Int64] = []
        var categorias: [String: ManagedObject] = [:]

        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            rows += 1
            let made = try manager.createDestinationInstance(entityName: mapping.destinationEntityName ?? "")
            let key = made.objectID.primaryKey
            let attributes = made.entity.attributes.map { $0.name }
            if setBeforeEvery > 0, rows % setBeforeEvery == 0 {
                try made.setValue(.string("set before"), forKey: attributes.last ?? "")
            }
            try manager.applyAttributeMappings(of: mapping, source: sInstance, destination: made)
            if made.isFault { deferred += 1 }
            writer = writer ?? manager.run.deferredAttributeMappings
            if readEvery > 0, rows % readEvery == 0 {
                read.append("\(try made.value(forKey: attributes[0]))")
            }
            if readPreviousEvery > 0, rows % readPreviousEvery == 0, let id = previous,
                let found = try manager.destinationStore?.object(with: id)
            {
                read.append("previous \(try found.value(forKey: attributes[0]))")
            }
            previous = made.objectID
            if setEvery > 0, rows % setEvery == 0 {
                try made.setValue(try sInstance.value(forKey: attributes[0]), forKey: attributes[0])
            }
            if fetchEvery > 0, rows % fetchEvery == 0, let store = manager.destinationStore {
                var request = FetchRequest(entityName: made.entity.name)
                request.sqlWhere = "t.Z_PK = ?"
                request.arguments = [.integer(key)]
                let found = try store.fetch(request)
                XCTAssertEqual(found.count, 1)
                if let row = found.first {
                    XCTAssertEqual(
                        try row.value(forKey: attributes[0]), try made.value(forKey: attributes[0]),
                        "the row fetched holds the mapped values")
                    fetched += 1
                }
            }
            if made.entity.name == "Nota", case .string(let name) = try sInstance.value(forKey: "categoria"),
                !name.isEmpty
            {
                let categoria: ManagedObject
                if let kept = categorias[name] {
                    categoria = kept
                } else {
                    categoria = try manager.createDestinationInstance(entityName: "Categoria")
                    try categoria.setValue(.string(name), forKey: "nombre")
                    categorias[name] = categoria
                }
                try made.setValue(.collection([.object(categoria)]), forKey: "categorias")
            }
            XCTAssertEqual(made.objectID.primaryKey, key, "the instance keeps its key")
            keys.append(key)
            try manager.associate(sourceInstance: sInstance, withDestinationInstance: made, for: mapping)
        }
    }

    struct Outcome {
        var rows: [String]
        var deferred: Int
        /// Rows the SQL wrote, and rows it declined.
        var bySQL: Int
        var declined: Int
        var read: [String]
        var fetched: Int
        var losses: LossReport
        var associations: [Int]
    }

    /// Migrates `source` with the policy, the values put off (`defers`) or evaluated at once.
    func migrate(
        _ source: String, from: ManagedObjectModel, to: ManagedObjectModel, mapping: String, defers: Bool,
        configure: (RowsPolicy) -> Void = { _ in }, batchSize: Int = 5_000
    ) throws -> Outcome {
        let manager = try MigrationManager(
            sourceModel: from, destinationModel: to, mappingModel: try MappingModel(json: mapping))
        let policy = RowsPolicy()
        configure(policy)
        manager.registerPolicy(named: "Rows") { policy }
        manager.defersAttributeMappings = defers
        manager.batchSize = batchSize
        let out = scratch.file("out-\(defers)-\(UInt32.random(in: 0...UInt32.max)).sqlite")
        let report = try manager.migrateStore(from: source, to: out, checkSourceVersion: false)
        return Outcome(
            rows: dump(out), deferred: policy.deferred, bySQL: policy.writer?.rowsWritten ?? 0,
            declined: policy.writer?.rowsDeclined ?? 0, read: policy.read, fetched: policy.fetched,
            losses: report.losses, associations: report.mappings.map { $0.associations })
    }

    // MARK: The notes and their categories

    static let notasV2 = """
        {"name": "Notas", "entities": [{"name": "Nota", "attributes": [
          {"name": "contenido", "type": "string", "optional": false}, {"name": "fecha", "type": "date", "optional": false},
          {"name": "etiquetas", "type": "string", "optional": true}, {"name": "categoria", "type": "string", "optional": true}]}]}
        """
    static let notasV3 = """
        {"name": "Notas", "entities": [
          {"name": "Nota", "attributes": [{"name": "contenido", "type": "string", "optional": false},
            {"name": "fecha", "type": "date", "optional": false}, {"name": "etiquetas", "type": "string", "optional": true}],
           "relationships": [{"name": "categorias", "destination": "Categoria", "inverse": "notas", "toMany": true}]},
          {"name": "Categoria", "attributes": [{"name": "nombre", "type": "string", "optional": false}],
           "relationships": [{"name": "notas", "destination": "Nota", "inverse": "categorias", "toMany": true}]}]}
        """
    static let notasMapping = """
        {"entityMappings": [{"name": "NotaToNota", "type": "custom", "policy": "Rows", "sourceEntity": "Nota",
          "destinationEntity": "Nota", "predicate": "TRUEPREDICATE",
          "attributeMappings": {"contenido": "$source.contenido", "fecha": "$source.fecha", "etiquetas": "$source.etiquetas"}}]}
        """

    /// 2,600 notes (more than the insert buffer holds), some keys missing (not every key range
    /// is consecutive), five categories and some notes without one.
    func notasSource() throws -> String {
        let path = scratch.file("notas.sqlite")
        try makeStore(path, try ManagedObjectModel(json: Self.notasV2)) { store in
            for i in 0..<2_600 {
                var values: [String: Value] = [
                    "contenido": .string("nota \(i)"), "fecha": .date(Double(i) * 3600),
                ]
                if i % 3 == 0 { values["etiquetas"] = .string("e\(i % 11)") }
                if i % 7 != 0 {
                    values["categoria"] = .string(["casa", "trabajo", "ideas", "compras", "viajes"][i % 5])
                }
                try insert(store, "Nota", values)
            }
        }
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(db, "DELETE FROM ZNOTA WHERE Z_PK IN (5, 6, 1500, 2001)", nil, nil, nil), SQLITE_OK)
        sqlite3_close(db)
        return path
    }

    func testTheNotesAreTheSameRowForRowWithTheValuesPutOffOrNot() throws {
        let source = try notasSource()
        let (v2, v3) = (try ManagedObjectModel(json: Self.notasV2), try ManagedObjectModel(json: Self.notasV3))
        let off = try migrate(source, from: v2, to: v3, mapping: Self.notasMapping, defers: false)
        let on = try migrate(source, from: v2, to: v3, mapping: Self.notasMapping, defers: true)
        XCTAssertEqual(off.deferred, 0)
        XCTAssertEqual(on.deferred, 2_596, "every note's values were put off")
        XCTAssertEqual(on.bySQL, 2_596, "and written by SQL")
        XCTAssertEqual(off.bySQL, 0)
        XCTAssertEqual(on.rows, off.rows)
        XCTAssertEqual(on.rows.filter { $0.hasPrefix("table") }.count, 4)
        XCTAssertEqual(on.losses, off.losses)
        XCTAssertEqual(on.associations, off.associations)
        XCTAssertEqual(on.associations, [2_596])
        // Commits in the middle of the buffer: the same rows.
        let small = try migrate(source, from: v2, to: v3, mapping: Self.notasMapping, defers: true, batchSize: 333)
        XCTAssertEqual(small.rows, off.rows)
    }

    func testAValueReadOrSetAfterApplyingIsTheMappedOneAndTheRowsAreTheSame() throws {
        let source = try notasSource()
        let (v2, v3) = (try ManagedObjectModel(json: Self.notasV2), try ManagedObjectModel(json: Self.notasV3))
        func configure(_ policy: RowsPolicy) {
            policy.readEvery = 5
            policy.setEvery = 13
            policy.readPreviousEvery = 11
        }
        let off = try migrate(source, from: v2, to: v3, mapping: Self.notasMapping, defers: false, configure: configure)
        let on = try migrate(source, from: v2, to: v3, mapping: Self.notasMapping, defers: true, configure: configure)
        XCTAssertEqual(on.read.count, 519 + 236)
        XCTAssertEqual(on.read, off.read)
        XCTAssertEqual(on.deferred, 2_596)
        // Those read or set were computed on the spot, and the previous rows read by ID that were
        // neither (174 of the 236): 2,596 − 519 − 199 + 39 − 174.
        XCTAssertEqual(on.bySQL, 1_743, "those read or set were computed on the spot")
        XCTAssertEqual(on.read.filter { $0.hasPrefix("previous") }.count, 236)
        XCTAssertEqual(on.read[0], "\(Value.string("nota 6"))", "keys 5 and 6 are missing")
        XCTAssertEqual(on.rows, off.rows)
        XCTAssertEqual(on.losses, off.losses)
    }

    func testAFetchOfTheDestinationAfterApplyingSeesTheRowWithItsValues() throws {
        let source = try notasSource()
        let (v2, v3) = (try ManagedObjectModel(json: Self.notasV2), try ManagedObjectModel(json: Self.notasV3))
        let off = try migrate(
            source, from: v2, to: v3, mapping: Self.notasMapping, defers: false, configure: { $0.fetchEvery = 97 })
        let on = try migrate(
            source, from: v2, to: v3, mapping: Self.notasMapping, defers: true, configure: { $0.fetchEvery = 97 })
        XCTAssertEqual(on.fetched, 26)
        XCTAssertEqual(off.fetched, 26)
        XCTAssertEqual(on.rows, off.rows)
    }

    func testAnInstanceWithAValueSetBeforeApplyingIsEvaluatedAtOnceWithTheSameRows() throws {
        let source = try notasSource()
        let (v2, v3) = (try ManagedObjectModel(json: Self.notasV2), try ManagedObjectModel(json: Self.notasV3))
        let off = try migrate(
            source, from: v2, to: v3, mapping: Self.notasMapping, defers: false, configure: { $0.setBeforeEvery = 10 })
        let on = try migrate(
            source, from: v2, to: v3, mapping: Self.notasMapping, defers: true, configure: { $0.setBeforeEvery = 10 })
        XCTAssertEqual(on.deferred, 2_596 - 259)
        XCTAssertEqual(on.bySQL, 2_596 - 259)
        XCTAssertEqual(on.rows, off.rows)
    }

    // MARK: Value expressions

    static let itemsV1 = """
        {"name": "Items", "entities": [{"name": "Item", "attributes": [
          {"name": "n", "type": "integer64", "optional": true}, {"name": "x", "type": "double", "optional": true},
          {"name": "title", "type": "string", "optional": true}, {"name": "small", "type": "integer16", "optional": true},
          {"name": "when", "type": "date", "optional": true}, {"name": "flag", "type": "boolean", "optional": true},
          {"name": "blob", "type": "transformable", "optional": true}]}]}
        """
    static let itemsV2 = """
        {"name": "Items", "entities": [{"name": "Item", "attributes": [
          {"name": "title", "type": "string", "optional": true},
          {"name": "n", "type": "integer64", "optional": true}, {"name": "doubled", "type": "integer64", "optional": true},
          {"name": "sum", "type": "double", "optional": true}, {"name": "label", "type": "string", "optional": true},
          {"name": "small", "type": "integer32", "optional": true}, {"name": "when", "type": "date", "optional": true},
          {"name": "flag", "type": "boolean", "optional": true}, {"name": "blob", "type": "transformable", "optional": true},
          {"name": "kept", "type": "string", "optional": true, "default": "unset"}]}]}
        """
    /// Constants, arithmetic, a widening conversion, a transformable copied: all SQL.
    static let itemsMapping = """
        {"entityMappings": [{"name": "ItemToItem", "type": "custom", "policy": "Rows", "sourceEntity": "Item",
          "destinationEntity": "Item", "predicate": "TRUEPREDICATE",
          "attributeMappings": {"title": "$source.title", "n": "$source.n", "doubled": "$source.n * 2", "sum": "$source.x + 1",
            "label": "\\"fixed\\"", "small": "$source.small", "when": "$source.when", "flag": "$source.flag",
            "blob": "$source.blob"}}]}
        """

    func itemsSource(_ update: String? = nil) throws -> String {
        let path = scratch.file("items-\(UInt32.random(in: 0...UInt32.max)).sqlite")
        try makeStore(path, try ManagedObjectModel(json: Self.itemsV1)) { store in
            for i in 0..<1_200 {
                var values: [String: Value] = [
                    "n": .integer(Int64(i) - 600), "x": .double(Double(i) / 4), "small": .integer(Int64(i % 300)),
                    "when": .date(Double(i)), "flag": .bool(i % 2 == 0), "blob": .binary([UInt8(i % 256), 1, 2]),
                ]
                if i % 4 != 0 { values["title"] = .string("item \(i)") }
                if i % 9 == 0 { values["n"] = .null }
                try insert(store, "Item", values)
            }
        }
        if let update = update {
            var db: OpaquePointer?
            XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
            XCTAssertEqual(sqlite3_exec(db, update, nil, nil, nil), SQLITE_OK)
            sqlite3_close(db)
        }
        return path
    }

    func testConstantsArithmeticConversionsAndTransformablesAreTheSameRowForRow() throws {
        let source = try itemsSource()
        let (v1, v2) = (try ManagedObjectModel(json: Self.itemsV1), try ManagedObjectModel(json: Self.itemsV2))
        let off = try migrate(source, from: v1, to: v2, mapping: Self.itemsMapping, defers: false)
        let on = try migrate(source, from: v1, to: v2, mapping: Self.itemsMapping, defers: true)
        XCTAssertEqual(on.deferred, 1_200)
        XCTAssertEqual(on.bySQL, 1_200)
        XCTAssertEqual(on.rows, off.rows)
        XCTAssertEqual(on.losses, off.losses)
        XCTAssertTrue(on.rows.contains { $0.contains("fixed:text") && $0.contains("unset:text") })
        // Read back after applying: the mapped values.
        let read = try migrate(
            source, from: v1, to: v2, mapping: Self.itemsMapping, defers: true, configure: { $0.readEvery = 3 })
        let readOff = try migrate(
            source, from: v1, to: v2, mapping: Self.itemsMapping, defers: false, configure: { $0.readEvery = 3 })
        XCTAssertEqual(read.read, readOff.read)
        XCTAssertEqual(read.rows, off.rows)
    }

    func testAFunctionInTheMappingEvaluatesAtOnceWithTheSameRows() throws {
        let source = try itemsSource()
        let (v1, v2) = (try ManagedObjectModel(json: Self.itemsV1), try ManagedObjectModel(json: Self.itemsV2))
        let mapping = Self.itemsMapping.replacingOccurrences(
            of: "\"$source.title\"", with: "\"FUNCTION($source.title, \\\"uppercaseString\\\")\"")
        let off = try migrate(source, from: v1, to: v2, mapping: mapping, defers: false)
        let on = try migrate(source, from: v1, to: v2, mapping: mapping, defers: true)
        XCTAssertEqual(on.deferred, 0, "a function needs the engine")
        XCTAssertEqual(on.rows, off.rows)
        XCTAssertTrue(on.rows.contains { $0.contains("ITEM 1:text") })
    }

    /// Stored values the SQL converts or refuses: the rows, or the error, are the immediate evaluation's.
    func testABadSourceValueGivesTheSameRowsOrTheSameError() throws {
        let (v1, v2) = (try ManagedObjectModel(json: Self.itemsV1), try ManagedObjectModel(json: Self.itemsV2))
        let narrow = Self.itemsV2.replacingOccurrences(
            of: "{\"name\": \"small\", \"type\": \"integer32\"", with: "{\"name\": \"small\", \"type\": \"integer16\"")
        for update in [
            "UPDATE ZITEM SET ZN = 'text' WHERE Z_PK = 700", "UPDATE ZITEM SET ZN = '12' WHERE Z_PK = 3",
            "UPDATE ZITEM SET ZX = 'abc' WHERE Z_PK = 1100", "UPDATE ZITEM SET ZTITLE = 42 WHERE Z_PK = 2",
            "UPDATE ZITEM SET ZSMALL = 100000 WHERE Z_PK = 1001", "UPDATE ZITEM SET ZFLAG = 'yes' WHERE Z_PK = 10",
        ] {
            let source = try itemsSource(update)
            for destination in [v2, try ManagedObjectModel(json: narrow)] {
                func outcome(_ defers: Bool) -> String {
                    do {
                        let o = try migrate(
                            source, from: v1, to: destination, mapping: Self.itemsMapping, defers: defers)
                        // Values SQL converts (`insertRowsConverting`) are written by SQL all the same.
                        XCTAssertEqual(o.bySQL, defers ? 1_200 : 0, update)
                        return o.rows.joined(separator: "\n")
                    } catch let error as MigrationError {
                        return
                            "error \(error.code.rawValue): \(error.message.components(separatedBy: " (x-coredata://")[0])"
                    } catch {
                        return "\(error)"
                    }
                }
                let off = outcome(false)
                XCTAssertEqual(outcome(true), off, update)
                if update.contains("100000") {
                    XCTAssertTrue(off.hasPrefix("error") == (destination !== v2), "\(update): \(off.prefix(200))")
                }
            }
        }
    }

    // MARK: Sub-entities

    static let animals = """
        {"name": "Animals", "entities": [
          {"name": "Animal", "attributes": [{"name": "name", "type": "string", "optional": true}]},
          {"name": "Dog", "parent": "Animal", "attributes": [{"name": "breed", "type": "string", "optional": true}]}]}
        """
    static let pets = """
        {"name": "Pets", "entities": [{"name": "Pet", "attributes": [{"name": "name", "type": "string", "optional": true},
          {"name": "kind", "type": "string", "optional": true}]}]}
        """
    static let animalsMapping = """
        {"entityMappings": [{"name": "AnimalToPet", "type": "custom", "policy": "Rows", "sourceEntity": "Animal",
          "destinationEntity": "Pet", "predicate": "TRUEPREDICATE",
          "attributeMappings": {"name": "$source.name", "kind": "\\"animal\\""}}]}
        """

    /// Rows of a sub-entity among the source rows: those are evaluated at once (the SQL reads the
    /// mapping's own entity), the others written by SQL over keys that are not consecutive.
    func testSourceRowsOfASubEntityAreEvaluatedAtOnceAndTheRowsAreTheSame() throws {
        let (from, to) = (try ManagedObjectModel(json: Self.animals), try ManagedObjectModel(json: Self.pets))
        let source = scratch.file("animals.sqlite")
        try makeStore(source, from) { store in
            for i in 0..<1_500 {
                try insert(store, i % 4 == 0 ? "Dog" : "Animal", ["name": .string("a\(i)")])
            }
        }
        let off = try migrate(source, from: from, to: to, mapping: Self.animalsMapping, defers: false)
        let on = try migrate(source, from: from, to: to, mapping: Self.animalsMapping, defers: true)
        XCTAssertEqual(on.deferred, 1_125)
        XCTAssertEqual(on.bySQL, 1_125)
        XCTAssertEqual(on.rows, off.rows)
        XCTAssertEqual(on.rows.filter { $0.contains("animal:text") }.count, 1_500)
    }
}
