import XCTest

@testable import CDMigrate

/// Fetches inside policies: sort descriptors (ORDER BY in SQL, Z_PK last), format specifiers
/// (%d, %i, %f, %K as %@), argument errors naming their position; and the error of an
/// unanswered FUNCTION($entityPolicy, …).
final class PolicyFetchSortingTests: XCTestCase {
    static let people = """
        {"name": "People", "versionIdentifier": "1", "entities": [
          {"name": "Person", "attributes": [{"name": "name", "type": "string"}, {"name": "country", "type": "string"},
                                            {"name": "age", "type": "integer64"}, {"name": "score", "type": "double"}],
           "relationships": [{"name": "friend", "destination": "Person"}]}
        ]}
        """
    static let copies = """
        {"name": "People", "versionIdentifier": "2", "entities": [
          {"name": "Copy", "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer64"}]}
        ]}
        """

    var scratch: ScratchDirectory!
    var v1: ManagedObjectModel!
    var v2: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        v1 = try ManagedObjectModel(json: Self.people)
        v2 = try ManagedObjectModel(json: Self.copies)
    }

    /// Rows in Z_PK order: names chosen so that primary-key, case-sensitive and case-insensitive orders differ.
    func makeSource() throws -> String {
        let path = scratch.file("people.sqlite")
        try makeStore(path, v1) { store in
            let rows: [(Value, String, Int64, Double)] = [
                (.string("bob"), "SE", 30, 1.5), (.string("Anna"), "FI", 30, 2.5),
                (.null, "SE", 20, 0.5), (.string("Cecil"), "SE", 40, 3.5),
                (.string("anna"), "FI", 10, 4.5),
            ]
            for (name, country, age, score) in rows {
                _ = try insert(
                    store, "Person",
                    ["name": name, "country": .string(country), "age": .integer(age), "score": .double(score)])
            }
        }
        return path
    }

    /// Runs `body` in the begin hook of a one-mapping migration copying Person to Copy.
    func duringMigration(_ body: @escaping (MigrationManager) throws -> Void) throws {
        final class Hook: EntityMigrationPolicy {
            let body: (MigrationManager) throws -> Void
            init(_ body: @escaping (MigrationManager) throws -> Void) { self.body = body }
            override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
                try body(manager)
            }
        }
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PersonToCopy", "sourceEntity": "Person", "destinationEntity": "Copy", "predicate": "TRUEPREDICATE", "policy": "Hook",
                  "attributeMappings": {"name": "$source.name", "age": "$source.age"}}]}
                """)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        manager.registerPolicy(named: "Hook") { Hook(body) }
        try manager.migrateStore(from: try makeSource(), to: scratch.file("out-\(UUID().uuidString).sqlite"))
    }

    func names(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { try $0.value(forKey: "name").stringValue ?? "nil" }
    }

    func testWithoutSortDescriptorsInstancesComeInPrimaryKeyOrder() throws {
        try duringMigration { manager in
            XCTAssertEqual(
                try self.names(manager.fetchSourceInstances(entityName: "Person")),
                ["bob", "Anna", "nil", "Cecil", "anna"])
            // Destination instances made in this pass, not yet written, in the order they were made.
            XCTAssertEqual(
                try self.names(manager.fetchDestinationInstances(entityName: "Copy")),
                ["bob", "Anna", "nil", "Cecil", "anna"])
            XCTAssertEqual(
                try manager.fetchDestinationInstances(entityName: "Copy").last.map { try $0.value(forKey: "name") },
                .string("anna"))
        }
    }

    func testSortDescriptorsOrderCaseSensitivelyWithNullFirstAndPrimaryKeyBreakingTies() throws {
        try duringMigration { manager in
            let byName = [FetchSortDescriptor(key: "name")]
            XCTAssertEqual(
                try self.names(manager.fetchSourceInstances(entityName: "Person", sortDescriptors: byName)),
                ["nil", "Anna", "Cecil", "anna", "bob"], "compare: puts upper case before lower case")
            XCTAssertEqual(
                try self.names(
                    manager.fetchSourceInstances(
                        entityName: "Person", sortDescriptors: [FetchSortDescriptor(key: "name", ascending: false)])),
                ["bob", "anna", "Cecil", "Anna", "nil"])
            // Two keys; ties of age 30 keep Z_PK order.
            XCTAssertEqual(
                try self.names(
                    manager.fetchSourceInstances(
                        entityName: "Person",
                        sortDescriptors: [FetchSortDescriptor(key: "age", ascending: false)])),
                ["Cecil", "bob", "Anna", "nil", "anna"])
            XCTAssertEqual(
                try self.names(
                    manager.fetchSourceInstances(
                        entityName: "Person",
                        sortDescriptors: [
                            FetchSortDescriptor(key: "country"), FetchSortDescriptor(key: "age", ascending: false),
                        ])),
                ["Anna", "anna", "Cecil", "bob", "nil"])
            // With a predicate that runs in Swift (MATCHES does not translate) and a limit.
            XCTAssertEqual(
                try self.names(
                    manager.fetchSourceInstances(
                        entityName: "Person", predicate: "name MATCHES '[a-z].*'",
                        fetchLimit: 1, sortDescriptors: byName)), ["anna"])
            // The destination, including instances not yet written.
            XCTAssertEqual(
                try self.names(
                    manager.fetchDestinationInstances(
                        entityName: "Copy",
                        sortDescriptors: [FetchSortDescriptor(key: "age"), FetchSortDescriptor(key: "name")])),
                ["anna", "nil", "Anna", "bob", "Cecil"])
        }
    }

    func testBadSortKeysNameTheDescriptor() throws {
        try duringMigration { manager in
            let cases: [(FetchSortDescriptor, String)] = [
                (
                    FetchSortDescriptor(key: "nmae"),
                    "sort descriptor 2 ('nmae') of a fetch of 'Person': entity 'Person' has no attribute 'nmae'"
                ),
                (
                    FetchSortDescriptor(key: "friend"),
                    "sort descriptor 2 ('friend') of a fetch of 'Person': 'friend' is a relationship"
                ),
                (
                    FetchSortDescriptor(key: "friend.name"),
                    "sort descriptor 2 ('friend.name') of a fetch of 'Person': sorting follows no relationships"
                ),
            ]
            for (descriptor, message) in cases {
                XCTAssertThrowsError(
                    try manager.fetchSourceInstances(
                        entityName: "Person", sortDescriptors: [FetchSortDescriptor(key: "age"), descriptor])
                ) { error in
                    XCTAssertEqual((error as? MigrationError)?.code, .invalidArgument)
                    XCTAssertTrue("\(error)".contains(message), "\(error)")
                }
            }
        }
    }

    func testFormatSpecifiersWorkAsObjectArgumentsInFetches() throws {
        try duringMigration { manager in
            XCTAssertEqual(
                try self.names(
                    manager.fetchSourceInstances(
                        entityName: "Person", predicate: "%K == %@ AND age > %d AND score < %f",
                        arguments: [.string("country"), .string("SE"), .integer(25), .double(2)])), ["bob"])
            XCTAssertEqual(
                try manager.countSourceInstances(
                    entityName: "Person", predicate: "age == %i", arguments: [.integer(30)]), 2)
            XCTAssertEqual(
                try self.names(
                    manager.fetchDestinationInstances(
                        entityName: "Copy", predicate: "%K BEGINSWITH %@", arguments: [.string("name"), .string("a")])),
                ["anna"])
        }
    }

    func testFormatArgumentErrorsNameThePosition() throws {
        try duringMigration { manager in
            let cases: [(String, [Value], String)] = [
                (
                    "name == %@ AND age > %d", [.string("x")],
                    "expected format argument 2 for '%d' (only 1 given) but found '%d' at character 21"
                ),
                (
                    "name == %@ AND age > %d", [.string("x"), .string("old")],
                    "expected a number as format argument 2 for '%d', not string 'old'"
                ),
                (
                    "%K == %@", [.integer(3), .string("x")],
                    "expected a key path string as format argument 1 for '%K', not integer '3'"
                ),
                (
                    "name == %@", [.string("x"), .integer(3)],
                    "format argument 2 of 2 is left over: 'name == %@' has 1 format specifier"
                ),
            ]
            for (predicate, arguments, message) in cases {
                XCTAssertThrowsError(
                    try manager.fetchSourceInstances(entityName: "Person", predicate: predicate, arguments: arguments)
                ) { error in
                    XCTAssertEqual((error as? MigrationError)?.code, .expressionSyntax, "\(error)")
                    XCTAssertTrue("\(error)".contains(message), "\(error)")
                }
            }
        }
    }

    func testAnUnansweredEntityPolicySelectorNamesThePolicyClassAndSelector() throws {
        final class Quiet: EntityMigrationPolicy {}
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PersonToCopy", "sourceEntity": "Person", "destinationEntity": "Copy", "predicate": "TRUEPREDICATE", "policy": "QuietPolicy",
                  "attributeMappings": {"name": "FUNCTION($entityPolicy, \\"initialOf:\\", $source.name)"}}]}
                """)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        manager.registerPolicy(named: "QuietPolicy") { Quiet() }
        XCTAssertThrowsError(try manager.migrateStore(from: try makeSource(), to: scratch.file("out.sqlite"))) {
            error in
            XCTAssertEqual((error as? MigrationError)?.code, .expressionEvaluation)
            XCTAssertTrue(
                "\(error)".contains(
                    "the entity policy QuietPolicy of entity mapping 'PersonToCopy' has no method for the selector 'initialOf:'"
                ), "\(error)")
        }
    }
}
