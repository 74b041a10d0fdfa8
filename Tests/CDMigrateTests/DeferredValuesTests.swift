import XCTest

@testable import CDMigrate

/// An inserted instance whose values were put off (`PersistentStore.deferValues`) is a fault: its
/// first access computes them; the insert buffer has its writer write the rows still put off, and
/// writes those the writer declines, or that had a relationship column set meanwhile, as any other.
final class DeferredValuesTests: XCTestCase {
    static let model = """
        {"name": "People", "entities": [
          {"name": "Person", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "team", "destination": "Team", "inverse": "members"}]},
          {"name": "Team", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "members", "destination": "Person", "inverse": "team", "toMany": true}]}
        ]}
        """

    /// Computes `name` from the source's; writes the rows it accepts with "sql <source key>".
    final class Writer: DeferredValuesWriter {
        var accepts = true
        var materialized: [Int64] = []
        var written: [Int64] = []
        var sources: [Int64: String] = [:]
        var fails = false

        func materialize(_ object: ManagedObject, _ deferred: DeferredValues) throws {
            if fails { throw MigrationError(.invalidArgument, "cannot compute \(deferred.sourceKey)") }
            materialized.append(object.objectID.primaryKey)
            try object.setValue(.string(sources[deferred.sourceKey] ?? "?"), forKey: "name")
        }

        func writeRows(_ objects: [(object: ManagedObject, sourceKey: Int64)], to store: PersistentStore) throws
            -> Bool
        {
            guard accepts else { return false }
            for (object, sourceKey) in objects {
                try store.database.run(
                    "INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)",
                    [
                        .integer(object.objectID.primaryKey),
                        .integer(Int64(store.layout.entityNumber(of: object.entity))), .string("sql \(sourceKey)"),
                    ])
                written.append(object.objectID.primaryKey)
            }
            return true
        }
    }

    var scratch: ScratchDirectory!
    var model: ManagedObjectModel!
    var store: PersistentStore!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        model = try ManagedObjectModel(json: Self.model)
        store = try PersistentStore.create(at: scratch.file("p.sqlite"), model: model)
    }

    override func tearDown() {
        store.close()
    }

    /// Puts off the values of `object`, computed as `name` by `writer`, made from source key `key`.
    func putOff(_ object: ManagedObject, _ name: String, key: Int64, _ writer: Writer) -> Bool {
        writer.sources[key] = name
        return store.deferValues(of: object, sourceKey: key, writer: writer)
    }

    func names() throws -> [String] {
        try store.fetch(FetchRequest(entityName: "Person")).map { "\(try $0.value(forKey: "name"))" }
    }

    func testTheRowsPutOffAreWrittenByTheWriterAndReadBackAsFaults() throws {
        let writer = Writer()
        let a = try store.insertObject(entityName: "Person")
        let b = try store.insertObject(entityName: "Person")
        XCTAssertTrue(putOff(a, "Ana", key: 7, writer))
        XCTAssertTrue(putOff(b, "Bo", key: 9, writer))
        XCTAssertTrue(a.isFault)
        XCTAssertFalse(putOff(a, "Ana", key: 7, writer), "once")
        XCTAssertTrue(try store.object(with: a.objectID) === a, "still the buffered instance")
        try store.flush()
        XCTAssertEqual(writer.written, [1, 2])
        XCTAssertEqual(writer.materialized, [])
        XCTAssertEqual(try a.value(forKey: "name"), .string("sql 7"), "a fault of the row written")
        XCTAssertEqual(try names().sorted(), ["\(Value.string("sql 7"))", "\(Value.string("sql 9"))"])
        XCTAssertEqual(writer.materialized, [])
    }

    func testTheFirstAccessComputesTheValuesAndTheBufferWritesThem() throws {
        let writer = Writer()
        let a = try store.insertObject(entityName: "Person")
        let b = try store.insertObject(entityName: "Person")
        XCTAssertTrue(putOff(a, "Ana", key: 7, writer))
        XCTAssertTrue(putOff(b, "Bo", key: 9, writer))
        XCTAssertEqual(try a.value(forKey: "name"), .string("Ana"))
        XCTAssertFalse(a.isFault)
        try b.setValue(.string("Eva"), forKey: "name")  // a write computes them first, then sets
        XCTAssertEqual(writer.materialized, [1, 2])
        try store.flush()
        XCTAssertEqual(writer.written, [])
        XCTAssertEqual(try names(), ["\(Value.string("Ana"))", "\(Value.string("Eva"))"])
    }

    func testRowsTheWriterDeclinesAreComputedAndWrittenByTheBuffer() throws {
        let writer = Writer()
        writer.accepts = false
        let a = try store.insertObject(entityName: "Person")
        XCTAssertTrue(putOff(a, "Ana", key: 7, writer))
        XCTAssertEqual(try store.count(FetchRequest(entityName: "Person")), 1, "a count writes the buffer first")
        XCTAssertEqual(writer.materialized, [1])
        XCTAssertEqual(try names(), ["\(Value.string("Ana"))"])
    }

    func testAnInstanceWithARelationshipColumnSetIsComputedAndWrittenByTheBuffer() throws {
        let writer = Writer()
        let team = try insert(store, "Team", ["name": "red"])
        let a = try store.insertObject(entityName: "Person")
        let b = try store.insertObject(entityName: "Person")
        XCTAssertTrue(putOff(a, "Ana", key: 7, writer))
        XCTAssertTrue(putOff(b, "Bo", key: 9, writer))
        try a.setValue(.object(team), forKey: "team")
        try store.flush()
        XCTAssertEqual(writer.materialized, [a.objectID.primaryKey])
        XCTAssertEqual(writer.written, [b.objectID.primaryKey])
        XCTAssertEqual(try names(), ["\(Value.string("Ana"))", "\(Value.string("sql 9"))"])
        XCTAssertEqual(try team.value(forKey: "members").elements.compactMap { $0.object?.objectID }, [a.objectID])
    }

    func testAnInstanceWithAnAttributeSetOrWrittenIsNotPutOff() throws {
        let writer = Writer()
        let a = try store.insertObject(entityName: "Person")
        try a.setValue(.string("x"), forKey: "name")
        XCTAssertFalse(putOff(a, "Ana", key: 7, writer))
        let b = try store.insertObject(entityName: "Person")
        try store.flush()
        XCTAssertFalse(putOff(b, "Bo", key: 9, writer))
        XCTAssertFalse(a.isFault)
    }

    func testAFailedComputationStaysPutOffAndAFailedWriteWritesNoRowTwice() throws {
        let writer = Writer()
        let failing = Writer()
        failing.accepts = false
        failing.fails = true
        let a = try store.insertObject(entityName: "Person")
        let b = try store.insertObject(entityName: "Person")
        XCTAssertTrue(putOff(a, "Ana", key: 7, writer))
        XCTAssertTrue(putOff(b, "Bo", key: 9, failing))
        XCTAssertThrowsError(try b.value(forKey: "name")) { error in
            XCTAssertEqual((error as? MigrationError)?.message, "cannot compute 9")
        }
        XCTAssertTrue(b.isFault, "still put off")
        XCTAssertThrowsError(try store.flush(), "b's writer declines and its values cannot be computed")
        XCTAssertEqual(writer.written, [1])
        failing.fails = false
        try store.flush()
        XCTAssertEqual(writer.written, [1], "a is not written again")
        XCTAssertEqual(try names(), ["\(Value.string("sql 7"))", "\(Value.string("Bo"))"])
    }
}
