import XCTest
import Foundation
@testable import CDMigrate

/// Stores with Core Data's persistent history tables (`ATRANSACTION`, `ACHANGE`,
/// `ATRANSACTIONSTRING`, entities 16001–16003 in `Z_PRIMARYKEY`), in the layout forensic readers
/// of iOS stores report: `StoreInfo` (and so `inspect`) counts their rows, and a migration, which
/// does not carry them, says so in its report instead of dropping them silently.
final class PersistentHistoryTablesTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    static let model = """
    {"name": "Notes", "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}]}]}
    """

    /// A store of `model` with two notes and the history of their insertion.
    func storeWithHistory() throws -> (path: String, model: ManagedObjectModel) {
        let model = try ModelReader.model(fromJSON: Self.model)
        let path = scratch.file("history.sqlite")
        try makeStore(path, model) { store in
            try insert(store, "Note", ["title": .string("a")])
            try insert(store, "Note", ["title": .string("b")])
        }
        let database = try SQLiteDatabase(path: path, mode: .readWrite)
        defer { database.close() }
        try database.exec("""
            CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB );
            CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB );
            CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
            CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME);
            INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 2), (16002, 'TRANSACTION', 0, 1), (16003, 'TRANSACTIONSTRING', 0, 1);
            INSERT INTO ATRANSACTIONSTRING VALUES (1, 16003, 1, 'com.example.app');
            INSERT INTO ATRANSACTION VALUES (1, 16002, 1, NULL, 1, NULL, NULL, 786000000.0, NULL, NULL, NULL, NULL, NULL);
            INSERT INTO ACHANGE VALUES (1, 16001, 1, 0, 1, 1, 1, NULL), (2, 16001, 1, 0, 1, 2, 1, NULL);
            """)
        return (path, model)
    }

    func testStoreInfoCountsTheHistoryTablesRows() throws {
        let (path, _) = try storeWithHistory()
        let info = try StoreInfo.read(at: path)
        let counts = Dictionary(uniqueKeysWithValues: info.entities.map { ($0.name, $0.rowCount) })
        XCTAssertEqual(counts["Note"], 2)
        XCTAssertEqual(counts["CHANGE"], 2)
        XCTAssertEqual(counts["TRANSACTION"], 1)
        XCTAssertEqual(counts["TRANSACTIONSTRING"], 1)
        XCTAssertEqual(info.entities.first { $0.name == "CHANGE" }?.entityNumber, 16001)
    }

    func testAMigrationSaysTheHistoryIsNotCarried() throws {
        let (path, model) = try storeWithHistory()
        let manager = try MigrationManager(sourceModel: model, destinationModel: model, mappingModel: try MappingModel.inferred(from: model, to: model))
        let destination = scratch.file("out.sqlite")
        let report = try manager.migrateStore(from: path, to: destination)
        let warning = report.warnings.first { $0.contains("persistent history") } ?? ""
        XCTAssertTrue(warning.contains("ACHANGE: 2 rows"), "\(report.warnings)")
        XCTAssertTrue(warning.contains("ATRANSACTION: 1 row,"), "\(report.warnings)")
        XCTAssertTrue(warning.contains("ATRANSACTIONSTRING: 1 row)"), "\(report.warnings)")
        // A store without history gets no such warning.
        let plain = scratch.file("plain.sqlite")
        try makeStore(plain, model) { try insert($0, "Note", ["title": .string("c")]) }
        let again = try manager.migrateStore(from: plain, to: scratch.file("plain-out.sqlite"))
        XCTAssertFalse(again.warnings.contains { $0.contains("persistent history") }, "\(again.warnings)")
    }
}
