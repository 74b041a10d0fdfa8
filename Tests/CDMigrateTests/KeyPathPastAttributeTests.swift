import XCTest

@testable import CDMigrate

/// Key paths that go on past an attribute (`$source.isExplored.boolValue`, `$source.title.length`)
/// ask the attribute's value, as Foundation's key-value coding does; they pass the checks before a
/// run when the value answers every key, and the checks name the first key it does not answer.
/// Collection operators on to-many key paths take every form Foundation has.
final class KeyPathPastAttributeTests: XCTestCase {
    static let v1 = """
        {"name": "Planets", "entities": [
          {"name": "Planet", "attributes": [{"name": "name", "type": "string"}, {"name": "isExplored", "type": "string", "optional": true},
                                            {"name": "moons", "type": "integer32", "optional": true}],
           "relationships": [{"name": "probes", "destination": "Probe", "inverse": "planet", "toMany": true}]},
          {"name": "Probe", "attributes": [{"name": "agency", "type": "string"}],
           "relationships": [{"name": "planet", "destination": "Planet", "inverse": "probes", "optional": true}]}
        ]}
        """
    static let v2 = """
        {"name": "Planets", "entities": [
          {"name": "Planet", "attributes": [{"name": "name", "type": "string"}, {"name": "explored", "type": "boolean", "optional": true},
                                            {"name": "nameLength", "type": "integer64", "optional": true},
                                            {"name": "hasMoons", "type": "boolean", "optional": true},
                                            {"name": "agencies", "type": "integer32", "optional": true}]}
        ]}
        """

    func mapping(_ attributeMappings: String) throws -> MappingModel {
        try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PlanetToPlanet", "sourceEntity": "Planet", "destinationEntity": "Planet",
                  "predicate": "TRUEPREDICATE", "attributeMappings": \(attributeMappings)}]}
                """)
    }

    func testKeysPastAnAttributeAreCheckedAgainstWhatItsValuesAnswer() throws {
        let source = try ManagedObjectModel(json: Self.v1)
        let destination = try ManagedObjectModel(json: Self.v2)
        let good = try mapping(
            #"{"name": "$source.name", "explored": "$source.isExplored.boolValue", "nameLength": "$source.name.length", "hasMoons": "$source.moons.boolValue"}"#
        )
        XCTAssertNoThrow(try good.validate(sourceModel: source, destinationModel: destination))
        let bad = try mapping(
            #"{"name": "$source.name.lowercaseString", "explored": "$source.isExplored.isExplored", "nameLength": "$source.moons.length"}"#
        )
        XCTAssertThrowsError(try bad.validate(sourceModel: source, destinationModel: destination)) { error in
            let messages = ((error as? MigrationError)?.underlying ?? []).map { $0.message }
            XCTAssertEqual(messages.count, 2, "\(messages)")
            XCTAssertTrue(
                messages.contains {
                    $0.contains(
                        "'isExplored' of entity 'Planet' is an attribute of type string, whose values do not answer 'isExplored'"
                    )
                }, "\(messages)")
            XCTAssertTrue(
                messages.contains {
                    $0.contains(
                        "'moons' of entity 'Planet' is an attribute of type integer32, whose values do not answer 'length'"
                    )
                }, "\(messages)")
        }
    }

    func testAStringAttributeReadAsABooleanMigratesAsFoundationReadsIt() throws {
        let scratch = ScratchDirectory()
        let source = try ManagedObjectModel(json: Self.v1)
        let destination = try ManagedObjectModel(json: Self.v2)
        let path = scratch.file("v1.sqlite")
        let out = scratch.file("v2.sqlite")
        // NSString.boolValue: Y, y, T, t or a digit 1-9 after white space, a sign and zeros.
        let flags: [String?] = ["YES", "no", "1", "0", nil, "  true", "+007", "Tuesday", "", "false"]
        let expected: [Bool?] = [true, false, true, false, nil, true, true, true, false, false]
        try makeStore(path, source) { store in
            for (i, flag) in flags.enumerated() {
                let planet = try insert(
                    store, "Planet",
                    [
                        "name": .string("Planet \(i)é"), "isExplored": flag.map { .string($0) } ?? .null,
                        "moons": i % 3 == 0 ? .null : .integer(Int64(i % 3)),
                    ])
                for k in 0..<(i % 4) {
                    let probe = try insert(store, "Probe", ["agency": .string(k % 2 == 0 ? "ESA" : "NASA")])
                    try probe.setValue(.object(planet), forKey: "planet")
                }
            }
        }
        let map = try mapping(
            #"""
            {"name": "$source.name", "explored": "$source.isExplored.boolValue", "nameLength": "$source.name.length",
             "hasMoons": "$source.moons.boolValue", "agencies": "FUNCTION($source.probes.@distinctUnionOfObjects.agency, \"count\")"}
            """#)
        _ = try MigrationManager(sourceModel: source, destinationModel: destination, mappingModels: [map]).migrateStore(
            from: path, to: out)
        let store = try PersistentStore.open(at: out, model: destination, readOnly: true)
        let planets = try store.fetch(FetchRequest(entityName: "Planet")).sorted {
            $0.objectID.primaryKey < $1.objectID.primaryKey
        }
        XCTAssertEqual(planets.count, flags.count)
        for (i, planet) in planets.enumerated() {
            let explored = try planet.value(forKey: "explored")
            XCTAssertEqual(
                explored.isNull ? nil : explored.boolValue, expected[i], "flag \(String(describing: flags[i]))")
            XCTAssertEqual(try planet.value(forKey: "nameLength"), .integer(Int64("Planet \(i)é".utf16.count)))
            XCTAssertEqual(try planet.value(forKey: "hasMoons"), i % 3 == 0 ? .null : .bool(true))
            XCTAssertEqual(try planet.value(forKey: "agencies"), .integer(Int64(min(i % 4, 2))), "planet \(i)")
        }
    }

    func testEveryCollectionOperatorOfFoundation() throws {
        let items: [Value] = [.integer(3), .integer(1), .integer(3), .null, .integer(2)]
        func apply(_ op: String) throws -> Value { try KeyValueCoding.value(.collection(items), keys: [op][...]) }
        XCTAssertEqual(try apply("@count"), .integer(5))
        XCTAssertEqual(try apply("@sum"), .integer(9))
        XCTAssertEqual(try apply("@min"), .integer(1))
        XCTAssertEqual(try apply("@max"), .integer(3))
        XCTAssertEqual(try apply("@unionOfObjects").elements.count, 5)
        XCTAssertEqual(try apply("@unionOfArrays").elements.count, 5)
        for distinct in ["@distinctUnionOfObjects", "@distinctUnionOfArrays", "@unionOfSets", "@distinctUnionOfSets"] {
            XCTAssertEqual(Set(try apply(distinct).elements.compactMap { $0.integerValue }), [1, 2, 3], distinct)
        }
        XCTAssertThrowsError(try apply("@median")) { error in
            XCTAssertTrue("\(error)".contains("unknown collection operator '@median'"), "\(error)")
        }
    }
}
