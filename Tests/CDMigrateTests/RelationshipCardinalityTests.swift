import Foundation
import XCTest

@testable import CDMigrate

/// What a relationship's optionality and counts allow, in destination validation and in inferred
/// mappings alike: Core Data enforces a to-many's `minCount`/`maxCount`, not its emptiness, and
/// checks no bounds on an empty optional relationship.
final class RelationshipCardinalityTests: XCTestCase {
    func model(_ version: String, _ entities: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            json: #"{"name": "M", "versionIdentifier": "\#(version)", "entities": [\#(entities)]}"#)
    }

    /// Authors and books whose `Author.books` has the given optionality and minimum count.
    func library(optional: Bool, minCount: Int) throws -> ManagedObjectModel {
        try model(
            "1",
            #"{"name": "Author", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "books", "destination": "Book", "inverse": "author", "toMany": true, "optional": \#(optional), "minCount": \#(minCount)}]}, {"name": "Book", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "author", "destination": "Author", "inverse": "books"}]}"#
        )
    }

    /// Validates a store of authors holding 0, 1 and 2 books; the error, or nil when it validates.
    func validationError(optional: Bool, minCount: Int) throws -> MigrationError? {
        let scratch = ScratchDirectory()
        let store = try PersistentStore.create(
            at: scratch.file("s.sqlite"), model: try library(optional: optional, minCount: minCount))
        defer { store.close() }
        for count in 0...2 {
            let author = try insert(store, "Author", ["name": .string("A\(count)")])
            for i in 0..<count {
                try insert(store, "Book", ["title": .string("B\(count).\(i)"), "author": .object(author)])
            }
        }
        try store.save()
        do {
            try DestinationValidation(store: store).validate()
            return nil
        } catch let error as MigrationError {
            return error
        }
    }

    func testANonOptionalToManyWithoutAMinimumMayBeEmpty() throws {
        XCTAssertNil(try validationError(optional: false, minCount: 0))
        XCTAssertNil(try validationError(optional: true, minCount: 0))
    }

    func testANonOptionalToManyWithAMinimumFailsEmptyOrShort() throws {
        let one = try XCTUnwrap(try validationError(optional: false, minCount: 1))
        XCTAssertEqual(one.code, .validationRelationshipLacksMinimumCount, one.message)
        XCTAssertEqual(one.code.rawValue, 1580)
        XCTAssertTrue(one.message.contains("Author.books has fewer than 1 instance"), one.message)

        let two = try XCTUnwrap(try validationError(optional: false, minCount: 2))
        XCTAssertEqual(two.code, .validationMultipleErrors, two.message)
        XCTAssertEqual(
            two.underlying.map { $0.code },
            [.validationRelationshipLacksMinimumCount, .validationRelationshipLacksMinimumCount],
            "the authors with none and with one")
        XCTAssertTrue(two.message.contains("Author.books has fewer than 2 instances in 2 instances"), two.message)
    }

    func testAnOptionalToManyChecksItsMinimumOnlyWhenNotEmpty() throws {
        let error = try XCTUnwrap(try validationError(optional: true, minCount: 2))
        XCTAssertEqual(error.code, .validationRelationshipLacksMinimumCount, error.message)
        XCTAssertEqual(error.validationSubject?.key, "books")
        XCTAssertTrue(error.message.contains("Author.books has fewer than 2 instances"), error.message)
    }

    func testANonOptionalToOneMustHoldAnInstance() throws {
        let scratch = ScratchDirectory()
        let m = try model(
            "1",
            #"{"name": "Author", "relationships": [{"name": "agent", "destination": "Agent", "optional": false}]}, {"name": "Agent"}"#
        )
        let store = try PersistentStore.create(at: scratch.file("s.sqlite"), model: m)
        defer { store.close() }
        try insert(store, "Author", [:])
        try store.save()
        XCTAssertThrowsError(try DestinationValidation(store: store).validate()) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .validationMissingMandatoryProperty, "\(error)")
            XCTAssertTrue(e?.message.contains("Author.agent is required but nil") ?? false, "\(error)")
        }
    }

    // MARK: Inference

    static let plain =
        #"{"name": "Author", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Book", "attributes": [{"name": "title", "type": "string"}]}"#

    static func withFavourites(optional: Bool, minCount: Int) -> String {
        #"{"name": "Author", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "favourites", "destination": "Book", "inverse": "fans", "toMany": true, "optional": \#(optional), "minCount": \#(minCount)}]}, {"name": "Book", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "fans", "destination": "Author", "inverse": "favourites", "toMany": true}]}"#
    }

    func testInferenceAcceptsANewNonOptionalToManyWithoutAMinimumAndTheMigrationValidates() throws {
        let v1 = try model("1", Self.plain)
        let v2 = try model("2", Self.withFavourites(optional: false, minCount: 0))
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        let scratch = ScratchDirectory()
        try makeStore(scratch.file("v1.sqlite"), v1) { store in
            try insert(store, "Author", ["name": "Ann"])
            try insert(store, "Book", ["title": "One"])
        }
        try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping).migrateStore(
            from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))
        let store = try PersistentStore.open(at: scratch.file("v2.sqlite"), model: v2)
        defer { store.close() }
        let ann = try XCTUnwrap(fetchAll(store, "Author").first)
        XCTAssertEqual(try ann.value(forKey: "favourites").elements.count, 0)
    }

    func testInferenceRefusesANewToManyThatMustHoldInstances() throws {
        do {
            _ = try MappingModel.inferred(
                from: try model("1", Self.plain), to: try model("2", Self.withFavourites(optional: false, minCount: 1)))
            XCTFail("a new non-optional to-many with minCount 1 cannot be filled")
        } catch let error as MigrationError {
            XCTAssertEqual(error.code, .inferredMappingModel)
            XCTAssertEqual(error.underlying.count, 1, "\(error.underlying)")
            XCTAssertTrue(
                error.underlying.first?.message.contains(
                    "new relationship 'Author.favourites' has minCount 1 and is non-optional") ?? false, "\(error)")
        }
        // Optional with a minimum: empty is allowed, so the new relationship is accepted.
        XCTAssertNoThrow(
            try MappingModel.inferred(
                from: try model("1", Self.plain), to: try model("2", Self.withFavourites(optional: true, minCount: 3))))
    }

    func testInferenceJudgesAChangedRelationshipByWhetherItMayBeEmpty() throws {
        let optional = Self.withFavourites(optional: true, minCount: 0)
        // Optional → non-optional without a minimum: every source value is still valid.
        XCTAssertNoThrow(
            try MappingModel.inferred(
                from: try model("1", optional), to: try model("2", Self.withFavourites(optional: false, minCount: 0))))
        // Non-optional without a minimum → non-optional with one: empty source values would fail.
        do {
            _ = try MappingModel.inferred(
                from: try model("1", Self.withFavourites(optional: false, minCount: 0)),
                to: try model("2", Self.withFavourites(optional: false, minCount: 1)))
            XCTFail("a to-many gaining a minimum may be empty in the source")
        } catch let error as MigrationError {
            XCTAssertTrue(
                error.underlying.first?.message.contains(
                    "'Author.favourites' becomes non-optional with minCount 1 (source relationship 'Author.favourites' may be empty)"
                ) ?? false, "\(error)")
        }
    }
}
