import Foundation
import XCTest

@testable import CDMigrate

/// Stores with Core Data's persistent history tables (`ATRANSACTION`, `ACHANGE`,
/// `ATRANSACTIONSTRING`, entities 16001–16003 in `Z_PRIMARYKEY`), in the layout forensic readers
/// of iOS stores report: `StoreInfo` (and so `inspect`) counts their rows; an inferred step carries
/// them, remapping the entity numbers and keys of the changes it records; a step with a custom
/// mapping model does not, and says so in its report.
final class PersistentHistoryTablesTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    /// v1: Note (1), Tag (2). v2: Archive (1, new), Note (2); Tag removed.
    static let v1 = """
        {"name": "Notes", "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}]},
                                       {"name": "Tag", "attributes": [{"name": "name", "type": "string"}]}]}
        """
    static let v2 = """
        {"name": "Notes", "entities": [{"name": "Archive", "attributes": [{"name": "label", "type": "string"}]},
                                       {"name": "Note", "attributes": [{"name": "title", "type": "string"}]}]}
        """

    /// A v1 store with notes at keys 10 and 20, a tag, and the history of their insertion.
    func storeWithHistory(_ name: String = "history.sqlite") throws -> (
        path: String, v1: ManagedObjectModel, v2: ManagedObjectModel
    ) {
        let v1 = try ManagedObjectModel(json: Self.v1)
        let v2 = try ManagedObjectModel(json: Self.v2)
        let path = scratch.file(name)
        try makeStore(path, v1) { store in
            try insert(store, "Note", ["title": .string("a")])
            try insert(store, "Note", ["title": .string("b")])
            try insert(store, "Tag", ["name": .string("t")])
        }
        let database = try SQLiteDatabase(path: path, mode: .readWrite)
        defer { database.close() }
        try database.exec(
            """
            UPDATE ZNOTE SET Z_PK = Z_PK * 10; UPDATE Z_PRIMARYKEY SET Z_MAX = 20 WHERE Z_NAME = 'Note';
            CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB );
            CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB );
            CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
            CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME);
            INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 3), (16002, 'TRANSACTION', 0, 1), (16003, 'TRANSACTIONSTRING', 0, 1);
            INSERT INTO ATRANSACTIONSTRING VALUES (1, 16003, 1, 'com.example.app');
            INSERT INTO ATRANSACTION VALUES (1, 16002, 1, NULL, 1, NULL, NULL, 786000000.0, NULL, NULL, NULL, NULL, NULL);
            INSERT INTO ACHANGE VALUES (1, 16001, 1, 0, 1, 10, 1, NULL), (2, 16001, 1, 0, 1, 20, 1, NULL), (3, 16001, 1, 0, 2, 1, 1, NULL);
            """)
        return (path, v1, v2)
    }

    func rows(_ path: String, _ sql: String) throws -> [String] {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        return try database.rows(sql).map {
            $0.map { $0.text ?? $0.integer.map(String.init) ?? "NULL" }.joined(separator: "|")
        }
    }

    func testStoreInfoCountsTheHistoryTablesRows() throws {
        let (path, _, _) = try storeWithHistory()
        let info = try StoreInfo.read(at: path)
        let counts = Dictionary(uniqueKeysWithValues: info.entities.map { ($0.name, $0.rowCount) })
        XCTAssertEqual(counts["Note"], 2)
        XCTAssertEqual(counts["CHANGE"], 3)
        XCTAssertEqual(counts["TRANSACTION"], 1)
        XCTAssertEqual(counts["TRANSACTIONSTRING"], 1)
        XCTAssertEqual(info.entities.first { $0.name == "CHANGE" }?.entityNumber, 16001)
    }

    /// An inferred step keeps the tables, their index and `Z_PRIMARYKEY` rows; Note's changes now
    /// name entity 2; the removed Tag's change is dropped and counted.
    func testAnInferredStepCarriesTheHistoryWithEntityNumbersAndKeysRemapped() throws {
        for pushDown in [true, false] {
            let (path, v1, v2) = try storeWithHistory("history-\(pushDown).sqlite")
            let manager = try MigrationManager(
                sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
            manager.pushDownSQL = pushDown
            let destination = scratch.file("out-\(pushDown).sqlite")
            let report = try manager.migrateStore(from: path, to: destination)
            XCTAssertFalse(
                report.warnings.contains { $0.contains("not carried into the destination") }, "\(report.warnings)")
            XCTAssertTrue(
                report.warnings.contains {
                    $0.hasPrefix("1 persistent history or CloudKit record of entities this step removes")
                }, "\(report.warnings)")
            let notes = try rows(destination, "SELECT Z_PK, ZTITLE FROM ZNOTE ORDER BY ZTITLE")
            let keyOf = Dictionary(
                uniqueKeysWithValues: notes.map { ($0.split(separator: "|")[1], $0.split(separator: "|")[0]) })
            // SQL keeps the source's keys; row by row numbers from 1, so the changes' keys move.
            XCTAssertEqual(Set(keyOf.values), pushDown ? ["10", "20"] : ["1", "2"], "\(notes)")
            // Each change still points at its note, whatever key the note has now.
            XCTAssertEqual(
                try rows(destination, "SELECT Z_PK, ZENTITY, ZENTITYPK FROM ACHANGE ORDER BY Z_PK"),
                ["1|2|\(keyOf["a"] ?? "?")", "2|2|\(keyOf["b"] ?? "?")"], "pushDown \(pushDown): notes \(notes)")
            XCTAssertEqual(try rows(destination, "SELECT ZNAME FROM ATRANSACTIONSTRING"), ["com.example.app"])
            XCTAssertEqual(try rows(destination, "SELECT COUNT(*) FROM ATRANSACTION"), ["1"])
            XCTAssertEqual(
                try rows(destination, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000 ORDER BY Z_ENT"),
                ["16001|CHANGE", "16002|TRANSACTION", "16003|TRANSACTIONSTRING"])
            XCTAssertEqual(
                try rows(destination, "SELECT name FROM sqlite_master WHERE name = 'Z_TRANSACTIONSTRING_UNIQUE_NAME'")
                    .count, 1)
            let counts = Dictionary(
                uniqueKeysWithValues: try StoreInfo.read(at: destination).entities.map { ($0.name, $0.rowCount) })
            XCTAssertEqual(counts["CHANGE"], 2)
            // The migrated store opens with the destination model.
            let store = try PersistentStore.open(at: destination, model: v2, readOnly: true, checkVersion: true)
            XCTAssertEqual(try fetchAll(store, "Note").count, 2)
            store.close()
        }
    }

    /// Core Data's persistent history triggers are temporary (`CREATE TEMPORARY TRIGGER … ZQ_…`,
    /// made on its own connection around a batch operation), so a store holds none: the only
    /// triggers of a migrated history-tracked store are the derived attributes' `Z_DA_…` triggers.
    func testAHistoryTrackedStoreGetsNoTriggersButTheDerivedAttributes() throws {
        let (path, v1, _) = try storeWithHistory()
        let v2 = try ManagedObjectModel(
            json: """
                {"name": "Notes", "entities": [{"name": "Archive", "attributes": [{"name": "label", "type": "string"}]},
                    {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "loud", "type": "string", "derivationExpression": "uppercase:(title)"}]}]}
                """)
        let destination = scratch.file("out.sqlite")
        try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2)
        )
        .migrateStore(from: path, to: destination)
        XCTAssertEqual(
            try rows(destination, "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"),
            ["Z_DA_ZNOTE_Note_loud_INSERT", "Z_DA_ZNOTE_Note_loud_UPDATE"])
        XCTAssertEqual(try rows(destination, "SELECT COUNT(*) FROM ACHANGE"), ["2"])
        XCTAssertEqual(try rows(destination, "SELECT ZLOUD FROM ZNOTE ORDER BY ZTITLE"), ["A", "B"])
    }

    /// A step with a custom mapping model does not carry the history, and its report says so.
    func testACustomMappingStepSaysTheHistoryIsNotCarried() throws {
        let (path, v1, v2) = try storeWithHistory()
        let json = try MappingModel.inferred(from: v1, to: v2).jsonText().replacingOccurrences(
            of: "IEM_Transform_Note", with: "NoteToNote"
        )
        .replacingOccurrences(of: "IEM_Copy_Note", with: "NoteToNote")
        let mapping = try MappingModel(json: json)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        let destination = scratch.file("out.sqlite")
        let report = try manager.migrateStore(from: path, to: destination)
        let warning = report.warnings.first { $0.contains("persistent history") } ?? ""
        XCTAssertTrue(warning.contains("ACHANGE: 3 rows"), "\(report.warnings)")
        XCTAssertTrue(warning.contains("ATRANSACTION: 1 row,"), "\(report.warnings)")
        XCTAssertTrue(warning.contains("ATRANSACTIONSTRING: 1 row)"), "\(report.warnings)")
        XCTAssertTrue(warning.contains("custom mapping model"), warning)
        XCTAssertEqual(try rows(destination, "SELECT name FROM sqlite_master WHERE name = 'ACHANGE'"), [])
        // A store without history gets no such warning.
        let plain = scratch.file("plain.sqlite")
        try makeStore(plain, v1) { try insert($0, "Note", ["title": .string("c")]) }
        let again = try manager.migrateStore(from: plain, to: scratch.file("plain-out.sqlite"))
        XCTAssertFalse(again.warnings.contains { $0.contains("persistent history") }, "\(again.warnings)")
    }
}
