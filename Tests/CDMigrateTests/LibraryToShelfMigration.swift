import XCTest

@testable import CDMigrate

/// The migration the association tests run both ways: a library of authors and their books to
/// a shelf of writers and their volumes, each entity mapping with a policy of the test's own
/// (`Writers`, `Volumes`); what a run gives is compared whole (`Run`).
enum LibraryToShelf {
    static let library = """
        {"name": "Library", "entities": [
          {"name": "Author", "attributes": [{"name": "name", "type": "string"}, {"name": "born", "type": "integer64"}],
           "relationships": [{"name": "books", "destination": "Book", "inverse": "author", "toMany": true}]},
          {"name": "Book", "attributes": [{"name": "title", "type": "string"}], "relationships": [
            {"name": "author", "destination": "Author", "inverse": "books"}]}
        ]}
        """
    static let shelf = """
        {"name": "Shelf", "entities": [
          {"name": "Writer", "attributes": [{"name": "name", "type": "string"}, {"name": "born", "type": "integer64"}],
           "relationships": [{"name": "volumes", "destination": "Volume", "inverse": "writer", "toMany": true}]},
          {"name": "Volume", "attributes": [{"name": "title", "type": "string"}], "relationships": [
            {"name": "writer", "destination": "Writer", "inverse": "volumes"}]}
        ]}
        """
    static let writerOfVolume =
        "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"AuthorToWriter\\\", $source.author)"
    /// What one run gave: every table, the report, the look-ups its policies made, the key ranges they saw.
    struct Run {
        var tables: [String]
        var report: String
        var lookups: [String]
        var keyRanges: [Int]
    }

    /// Core Data's look-ups about every source and destination instance of `mapping`, as a
    /// policy asks them at the end of stage 1.
    static func lookups(of mapping: EntityMapping, manager: MigrationManager) throws -> [String] {
        guard let source = manager.sourceStore, let destination = manager.destinationStore,
            let sourceEntity = mapping.sourceEntityName, let destinationEntity = mapping.destinationEntityName
        else {
            XCTFail("no stores")
            return []
        }
        var lookups: [String] = []
        for instance in try fetchAll(source, sourceEntity) {
            let made = try manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [instance])
            lookups.append("\(instance.objectID.primaryKey) -> \(made.map { $0.objectID.primaryKey })")
        }
        for instance in try fetchAll(destination, destinationEntity) {
            let from = try manager.sourceInstances(
                forEntityMappingName: mapping.name, destinationInstances: [instance])
            lookups.append("\(instance.objectID.primaryKey) <- \(from.map { $0.objectID.primaryKey })")
        }
        return lookups
    }
}

/// A test class migrating `LibraryToShelf`: its scratch folder and source model.
protocol LibraryToShelfMigration: SQLiteFileAccess {
    var scratch: ScratchDirectory! { get }
    var v1: ManagedObjectModel! { get }
}

extension LibraryToShelfMigration {
    /// 40 authors with 6 books each; books deleted here and there (a gap in a batch) and in a
    /// dense stretch (keys too scattered for ranges).
    func makeLibrary() throws -> String {
        let path = scratch.file("library.sqlite")
        try makeStore(path, v1) { store in
            for a in 0..<40 {
                let author = try insert(store, "Author", ["name": .string("A\(a)"), "born": .integer(Int64(1900 + a))])
                for b in 0..<6 {
                    let book = try insert(store, "Book", ["title": .string("B\(a)-\(b)")])
                    try book.setValue(.object(author), forKey: "author")
                }
            }
        }
        try sql(path, "DELETE FROM ZBOOK WHERE Z_PK % 50 = 0 OR (Z_PK BETWEEN 130 AND 170 AND Z_PK % 3 = 0)")
        return path
    }

    /// Every row of every table of the store but its metadata (which holds the store's UUID), in key order.
    func tables(_ path: String) -> [String] {
        let names = rows(
            path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'Z_METADATA' ORDER BY name")
        return names.flatMap { name in ["table \(name)"] + rows(path, "SELECT * FROM \"\(name)\"").sorted() }
    }

    func mapping() throws -> MappingModel {
        try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "AuthorToWriter", "sourceEntity": "Author", "destinationEntity": "Writer", "type": "custom",
                   "predicate": "TRUEPREDICATE",
                   "policy": "Writers", "attributeMappings": {"name": "$source.name"}},
                  {"name": "BookToVolume", "sourceEntity": "Book", "destinationEntity": "Volume", "type": "custom",
                   "predicate": "TRUEPREDICATE",
                   "policy": "Volumes", "attributeMappings": {"title": "$source.title"},
                   "relationshipMappings": {"writer": "\(LibraryToShelf.writerOfVolume)"}}
                ]}
                """)
    }
}
