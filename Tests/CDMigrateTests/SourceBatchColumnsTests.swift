import XCTest

@testable import CDMigrate

/// `SourceBatch.columns(ofAttributes:)` gives the values `values(ofAttribute:)` gives, laid out
/// flat by kind, for every attribute type, a sub-entity's rows, stored values of other storage
/// classes and a gap in the keys; and the batch default numbered in key order, when the keys it
/// gives are the source keys, copies them as they are with the same destination as numbering them.
final class SourceBatchColumnsTests: XCTestCase, SQLiteFileAccess {
    static let kinds = """
        {"name": "Kinds", "entities": [
          {"name": "Thing", "attributes": [
            {"name": "i16", "type": "integer16"}, {"name": "i64", "type": "integer64"},
            {"name": "flag", "type": "boolean"}, {"name": "dbl", "type": "double"}, {"name": "flt", "type": "float"},
            {"name": "when", "type": "date"}, {"name": "text", "type": "string"}, {"name": "link", "type": "uri"},
            {"name": "dec", "type": "decimal"}, {"name": "ident", "type": "uuid"}, {"name": "data", "type": "binary"}]},
          {"name": "Special", "parent": "Thing", "attributes": [{"name": "extra", "type": "string"}]}
        ]}
        """
    static let attributes = [
        "i16", "i64", "flag", "dbl", "flt", "when", "text", "link", "dec", "ident", "data", "extra",
    ]

    /// Compares both reads of every attribute in each batch.
    final class Comparing: EntityMigrationPolicy {
        var compared = 0
        var kinds: [SourceBatchColumn.Kind] = []
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            let columns = try batch.columns(ofAttributes: SourceBatchColumnsTests.attributes)
            kinds = columns.map(\.kind)
            for (name, column) in zip(SourceBatchColumnsTests.attributes, columns) {
                let values = try batch.values(ofAttribute: name)
                XCTAssertEqual(column.count, batch.count)
                for (row, value) in values.enumerated() {
                    XCTAssertEqual(Self.read(column, row), Self.expected(value), "\(name) row \(row)")
                }
            }
            XCTAssertThrowsError(try batch.columns(ofAttributes: ["nothing"]))
            compared += batch.count
            try batch.applyDefault()
        }

        /// A row of a column as text: nil for a null, else its number or its bytes.
        static func read(_ column: SourceBatchColumn, _ row: Int) -> String? {
            if column.nulls.contains(Int64(row)) { return nil }
            switch column.kind {
            case .integer: return "\(column.integers[row])"
            case .double: return "\(column.doubles[row])"
            case .text, .bytes:
                let start = Int(column.offsets[row])
                let end = Int(column.offsets[row + 1]) - 1
                XCTAssertEqual(column.bytes[end], 0)
                return "\(Array(column.bytes[start..<end]))"
            }
        }

        static func expected(_ value: Value) -> String? {
            switch value {
            case .null: return nil
            case .integer(let i): return "\(i)"
            case .bool(let b): return b ? "1" : "0"
            case .double(let d), .date(let d): return d.isFinite ? "\(d)" : nil
            case .string(let s), .uri(let s), .decimal(let s): return "\(Array(s.utf8))"
            case .uuid(let b): return "\(Array(Value.uuidString(b).utf8))"
            case .binary(let b): return "\(b)"
            default: return "unexpected \(value)"
            }
        }
    }

    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    func testColumnsAreTheValuesOfEachAttributeLaidOutFlat() throws {
        let model = try ManagedObjectModel(json: Self.kinds)
        let source = scratch.file("kinds.sqlite")
        try makeStore(source, model) { store in
            for i in 0..<20 {
                try insert(
                    store, i % 4 == 0 ? "Special" : "Thing",
                    [
                        "i16": .integer(Int64(i)), "i64": .integer(Int64(i) << 40), "flag": .bool(i % 2 == 0),
                        "dbl": .double(Double(i) / 3), "flt": .double(1.5), "when": .date(Double(i) * 86_400.25),
                        "text": .string("héllo \(i) ✓"), "link": .uri("https://example.com/\(i)"),
                        "dec": .decimal("\(i).50"), "ident": .uuid(Array(repeating: UInt8(i), count: 16)),
                        "data": .binary([0, UInt8(i), 255]),
                    ].merging(i % 4 == 0 ? ["extra": .string("x\(i)")] : [:]) { a, _ in a })
            }
        }
        // Stored values of other classes, ill-formed UTF-8, a NUL inside a text, infinities, a gap.
        try sql(
            source,
            """
            UPDATE ZTHING SET ZTEXT = CAST(X'66FF6F' AS TEXT), ZDBL = 9e999 WHERE Z_PK = 2;
            UPDATE ZTHING SET ZTEXT = 'a' || char(0) || 'b', ZI16 = '12', ZFLAG = 7 WHERE Z_PK = 3;
            UPDATE ZTHING SET ZTEXT = 42, ZDBL = '2.5', ZWHEN = 10, ZI64 = 3.0, ZDEC = 7 WHERE Z_PK = 5;
            UPDATE ZTHING SET ZTEXT = NULL, ZDATA = NULL, ZIDENT = 'not a uuid' WHERE Z_PK = 6;
            DELETE FROM ZTHING WHERE Z_PK = 9;
            """)
        let mapping = try MappingModel(
            json: """
                {"entityMappings": [{"name": "ThingToThing", "sourceEntity": "Thing", "destinationEntity": "Thing",
                  "type": "custom", "policy": "Comparing", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"text": "$source.text"}}]}
                """)
        for batchSize in [1, 6, 100] {
            let manager = try MigrationManager(sourceModel: model, destinationModel: model, mappingModel: mapping)
            let policy = Comparing()
            manager.batchSize = batchSize
            manager.registerPolicy(named: "Comparing") { policy }
            _ = try manager.migrateStore(from: source, to: scratch.file("out-\(batchSize).sqlite"))
            XCTAssertEqual(policy.compared, 19)
            XCTAssertEqual(
                policy.kinds,
                [.integer, .integer, .integer, .double, .double, .double, .text, .text, .text, .text, .bytes, .text])
        }
    }

    /// Numbered batches, with one instance made between them in the third batch: the batches before
    /// it get the source keys (copied as they are), those after it the next keys.
    final class Numbered: EntityMigrationPolicy {
        var batches = 0
        var keys: [Int64] = []
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            batches += 1
            if batches == 3 {
                keys += try manager.createDestinationInstances(entityName: "Thing", values: [["text": .string("own")]])
            }
            keys += try batch.applyDefault(numbered: true)
        }
    }

    func testNumberedDefaultCopiesSourceKeysThatAreTheNextKeys() throws {
        let model = try ManagedObjectModel(json: Self.kinds)
        let plain = try ManagedObjectModel(
            json: """
                {"name": "Plain", "entities": [{"name": "Thing", "attributes": [
                  {"name": "text", "type": "string"}, {"name": "i64", "type": "integer64"}]}]}
                """)
        let source = scratch.file("plain.sqlite")
        try makeStore(source, plain) { store in
            for i in 0..<30 { try insert(store, "Thing", ["text": .string("t\(i)"), "i64": .integer(Int64(i))]) }
        }
        let mapping = try MappingModel(
            json: """
                {"entityMappings": [{"name": "ThingToThing", "sourceEntity": "Thing", "destinationEntity": "Thing",
                  "type": "custom", "policy": "Numbered", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"text": "$source.text", "i64": "$source.i64 * 2"}}]}
                """)
        var results: [[String]] = []
        for keeps in [true, false] {
            let manager = try MigrationManager(sourceModel: plain, destinationModel: model, mappingModel: mapping)
            let policy = Numbered()
            manager.batchSize = 8
            manager.keepsSourceKeys = keeps  // false: every batch numbered by SQL, as before
            manager.registerPolicy(named: "Numbered") { policy }
            let out = scratch.file("numbered-\(keeps).sqlite")
            _ = try manager.migrateStore(from: source, to: out)
            XCTAssertEqual(policy.keys, Array(1...31))
            results.append(
                rows(out, "SELECT Z_PK, Z_ENT, ZTEXT, ZI64 FROM ZTHING ORDER BY Z_PK")
                    + rows(out, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_NAME"))
        }
        XCTAssertEqual(results[0], results[1])
        XCTAssertTrue(results[0].contains("17|1|own|NULL"), "\(results[0])")
        XCTAssertTrue(results[0].contains("31|1|t29|58"), "\(results[0])")
    }
}
