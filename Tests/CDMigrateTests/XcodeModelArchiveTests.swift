import XCTest
import Foundation
@testable import CDMigrate

/// Models kept as Xcode's model editor archive: Xcode 3's `elements` files.
final class XcodeModelArchiveTests: XCTestCase {
    static let booksFolder = TestPaths.fixtures + "/xcode3/CoreDataBooks"
    static let booksBundle = booksFolder + "/CoreDataBooks.xcdatamodeld"

    /// Apple's CoreDataBooks model, written by Xcode 3, computes the Book hash Apple's store records.
    func testAnXcode3ModelComputesTheHashAppleShippedInItsStore() throws {
        let model = try ModelReader.model(fromXcodeModel: Self.booksBundle)
        let book = try XCTUnwrap(model.entity(named: "Book"))
        XCTAssertEqual(book.attributes.map { $0.name }.sorted(), ["author", "copyright", "title"])
        XCTAssertEqual(book.attribute(named: "copyright")?.attributeType, .date)
        XCTAssertEqual(book.attribute(named: "title")?.attributeType, .string)
        let scratch = ScratchDirectory()
        let store = try copyFixtureStore("xcode3/CoreDataBooks/CoreDataBooks.CDBStore", into: scratch.path)
        let metadata = try StoreInfo.read(at: store).metadata
        XCTAssertEqual(metadata.versionHashes["Book"], book.versionHash)
        XCTAssertTrue(model.isCompatible(withStoreMetadata: metadata))
        let set = try ModelVersionSet(contentsOf: Self.booksBundle)
        XCTAssertEqual(set.versionName(forStoreMetadata: metadata), "CoreDataBooks")
    }

    /// A set whose first version is in Xcode 3's format and whose second is Xcode 4's brings
    /// Apple's store up to date, every book kept.
    func testApplesStoreMigratesFromTheXcode3VersionToALaterOne() throws {
        let scratch = ScratchDirectory()
        let bundle = scratch.file("CoreDataBooks.xcdatamodeld")
        try FileManager.default.copyItem(atPath: Self.booksBundle, toPath: bundle)
        try FileManager.default.createDirectory(atPath: bundle + "/CoreDataBooks 2.xcdatamodel", withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Book" representedClassName="Book">
                <attribute name="author" optional="YES" attributeType="String"/>
                <attribute name="copyright" optional="YES" attributeType="Date"/>
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="rating" optional="YES" attributeType="Integer 16" defaultValueString="0"/>
            </entity>
        </model>
        """.write(toFile: bundle + "/CoreDataBooks 2.xcdatamodel/contents", atomically: true, encoding: .utf8)
        try "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>CoreDataBooks 2.xcdatamodel</string></dict></plist>\n"
            .write(toFile: bundle + "/.xccurrentversion", atomically: true, encoding: .utf8)
        let source = try copyFixtureStore("xcode3/CoreDataBooks/CoreDataBooks.CDBStore", into: scratch.path)
        let set = try ModelSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["CoreDataBooks", "CoreDataBooks 2"])
        let manager = try StagedMigrationManager(storeAt: source, models: set)
        XCTAssertEqual(manager.plan.storeVersionName, "CoreDataBooks")
        let destination = scratch.file("books.sqlite")
        try manager.migrateStore(to: destination)
        let store = try PersistentStore.open(at: destination, model: try XCTUnwrap(set.currentModel), readOnly: true, checkVersion: true)
        defer { store.close() }
        let books = try fetchAll(store, "Book")
        XCTAssertEqual(books.count, 11)
        XCTAssertTrue(try books.allSatisfy { try $0.value(forKey: "rating") == .integer(0) })
        let titles = try books.map { try $0.value(forKey: "title") }
        XCTAssertTrue(titles.contains(.string("Strata")), "\(titles)")
    }

    /// An `elements` file that is not an archive skips its version with a warning naming it; the
    /// rest of the set works.
    func testAnUnreadableXcode3VersionIsSkippedWithAWarning() throws {
        let scratch = ScratchDirectory()
        let bundle = try ModelVersionOrderTests.writeBundle(scratch.path, versions: ["v2": ["a"], "v3": ["a", "b"]], current: "v3")
        try FileManager.default.createDirectory(atPath: bundle + "/v1.xcdatamodel", withIntermediateDirectories: true)
        try Data("not an archive".utf8).write(to: URL(fileURLWithPath: bundle + "/v1.xcdatamodel/elements"))
        let set = try ModelVersionSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["v2", "v3"])
        XCTAssertEqual(set.warnings.count, 1)
        XCTAssertTrue(set.warnings[0].contains("'v1' is skipped") && set.warnings[0].contains("v1.xcdatamodel/elements"), set.warnings[0])
        XCTAssertThrowsError(try ModelReader.model(fromXcodeModel: bundle + "/v1.xcdatamodel")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidModel)
            XCTAssertTrue("\(error)".contains("Xcode 3 model"), "\(error)")
        }
        // A version folder with neither file says what it looked for.
        try FileManager.default.removeItem(atPath: bundle + "/v1.xcdatamodel/elements")
        XCTAssertThrowsError(try ModelReader.model(fromXcodeModel: bundle + "/v1.xcdatamodel")) { error in
            XCTAssertTrue("\(error)".contains("'contents'") && "\(error)".contains("'elements'"), "\(error)")
        }
    }

    /// The models an Xcode mapping model embeds are the same editor archive: each decodes to the
    /// model of the version it was made from, entity hashes and all.
    func testAMappingModelsEmbeddedModelsDecodeToTheirVersions() throws {
        let set = try ModelVersionSet(contentsOf: TestPaths.fixtures + "/xcode/XcodeServer/2_0_0/XcodeServer.xcdatamodeld")
        let mapping = TestPaths.fixtures + "/xcode/XcodeServer/2_0_0/MappingModel.xcmappingmodel"
        let embedded = try XcodeMappingModelReader.embeddedModels(mapping)
        let destination = try XCTUnwrap(embedded.destination)
        let current = try XCTUnwrap(set.currentModel)
        XCTAssertEqual(destination.entities.count, current.entities.count)
        for entity in current.entities {
            XCTAssertEqual(destination.entity(named: entity.name)?.versionHash, entity.versionHash, entity.name)
        }
        // UnCloudNotes v4: an entity inheriting another (Xcode's generalization) and to-many relationships.
        let notes = TestPaths.fixtures + "/xcode/UnCloudNotes"
        let v4 = try XCTUnwrap(try ModelVersionSet(contentsOf: notes + "/UnCloudNotesDataModel.xcdatamodeld").models["UnCloudNotesDataModel_v4"])
        let embeddedV4 = try XCTUnwrap(try XcodeMappingModelReader.embeddedModels(notes + "/UnCloudNotesMappingModel_v3_to_v4.xcmappingmodel").destination)
        XCTAssertEqual(embeddedV4.entity(named: "ImageAttachment")?.parentName, "Attachment")
        XCTAssertEqual(embeddedV4.entities.map { $0.name }.sorted(), v4.entities.map { $0.name }.sorted())
        for entity in v4.entities {
            XCTAssertEqual(embeddedV4.entity(named: entity.name)?.versionHash, entity.versionHash, entity.name)
        }
    }
}
