import Foundation
import XCTest

@testable import CDMigrate

/// Models kept as Xcode's model editor archive: Xcode 3's `elements` files.
final class XcodeModelArchiveTests: XCTestCase {
    static let booksFolder = TestPaths.fixtures + "/xcode3/CoreDataBooks"
    static let booksBundle = booksFolder + "/CoreDataBooks.xcdatamodeld"

    /// Apple's CoreDataBooks model, written by Xcode 3, computes the Book hash Apple's store records.
    func testAnXcode3ModelComputesTheHashAppleShippedInItsStore() throws {
        let model = try ManagedObjectModel(contentsOf: Self.booksBundle)
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
        try FileManager.default.createDirectory(
            atPath: bundle + "/CoreDataBooks 2.xcdatamodel", withIntermediateDirectories: true)
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
        try
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>CoreDataBooks 2.xcdatamodel</string></dict></plist>\n"
            .write(toFile: bundle + "/.xccurrentversion", atomically: true, encoding: .utf8)
        let source = try copyFixtureStore("xcode3/CoreDataBooks/CoreDataBooks.CDBStore", into: scratch.path)
        let set = try ModelSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["CoreDataBooks", "CoreDataBooks 2"])
        let manager = try StagedMigrationManager(storeAt: source, models: set)
        XCTAssertEqual(manager.plan.storeVersionName, "CoreDataBooks")
        let destination = scratch.file("books.sqlite")
        try manager.migrateStore(to: destination)
        let store = try PersistentStore.open(
            at: destination, model: try XCTUnwrap(set.currentModel), readOnly: true, checkVersion: true)
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
        let bundle = try ModelVersionOrderTests.writeBundle(
            scratch.path, versions: ["v2": ["a"], "v3": ["a", "b"]], current: "v3")
        try FileManager.default.createDirectory(atPath: bundle + "/v1.xcdatamodel", withIntermediateDirectories: true)
        try Data("not an archive".utf8).write(to: URL(fileURLWithPath: bundle + "/v1.xcdatamodel/elements"))
        let set = try ModelVersionSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["v2", "v3"])
        XCTAssertEqual(set.warnings.count, 1)
        XCTAssertTrue(
            set.warnings[0].contains("'v1' is skipped") && set.warnings[0].contains("v1.xcdatamodel/elements"),
            set.warnings[0])
        XCTAssertThrowsError(try ManagedObjectModel(contentsOf: bundle + "/v1.xcdatamodel")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidModel)
            XCTAssertTrue("\(error)".contains("Xcode 3 model"), "\(error)")
        }
        // A version folder with neither file says what it looked for.
        try FileManager.default.removeItem(atPath: bundle + "/v1.xcdatamodel/elements")
        XCTAssertThrowsError(try ManagedObjectModel(contentsOf: bundle + "/v1.xcdatamodel")) { error in
            XCTAssertTrue("\(error)".contains("'contents'") && "\(error)".contains("'elements'"), "\(error)")
        }
    }

    /// The models an Xcode mapping model embeds are the same editor archive: each decodes to the
    /// model of the version it was made from, entity hashes and all.
    func testAMappingModelsEmbeddedModelsDecodeToTheirVersions() throws {
        let set = try ModelVersionSet(
            contentsOf: TestPaths.fixtures + "/xcode/XcodeServer/2_0_0/XcodeServer.xcdatamodeld")
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
        let v4 = try XCTUnwrap(
            try ModelVersionSet(contentsOf: notes + "/UnCloudNotesDataModel.xcdatamodeld").models[
                "UnCloudNotesDataModel_v4"])
        let embeddedV4 = try XCTUnwrap(
            try XcodeMappingModelReader.embeddedModels(notes + "/UnCloudNotesMappingModel_v3_to_v4.xcmappingmodel")
                .destination)
        XCTAssertEqual(embeddedV4.entity(named: "ImageAttachment")?.parentName, "Attachment")
        XCTAssertEqual(embeddedV4.entities.map { $0.name }.sorted(), v4.entities.map { $0.name }.sorted())
        for entity in v4.entities {
            XCTAssertEqual(embeddedV4.entity(named: entity.name)?.versionHash, entity.versionHash, entity.name)
        }
    }
}

/// Xcode 3 models built by hand in Xcode's editor archive format, read against the same model
/// written as Xcode 4's XML, and damaged ones refused with an error naming what is wrong.
final class XcodeModelArchiveShapeTests: XCTestCase {
    /// An `XDPMModel` archive: Author (name, books ↔ Book.author, to-many ordered, cascade),
    /// Book (title, pages Integer 32 default 1, author, optional to-one) and Novel : Book (genre).
    static func archive(
        attributeTypeOfTitle: Int64 = 700, destinationOfAuthor: Bool = true, rootClass: String = "XDPMModel"
    ) -> [UInt8] {
        let b = KeyedArchiveBuilder()
        let root = b.reserve()
        let package = b.reserve()
        let author = b.reserve()
        let book = b.reserve()
        let novel = b.reserve()
        let books = b.reserve()
        let bookAuthor = b.reserve()
        func stereotype(_ owner: PropertyListValue, _ name: String, _ settings: [(String, PropertyListValue)])
            -> PropertyListValue
        {
            let holder = b.reserve()
            let properties = settings.map { key, value in
                (
                    b.string(key),
                    b.instance(
                        ["XDUMLPropertyImp"], [("_name", b.string(key)), ("_default", value), ("_owner", holder)])
                )
            }
            b.instance(
                ["XDUMLStereotypeImp", "XDUMLClassImp"],
                [
                    ("_name", b.string(name)), ("_owner", owner),
                    ("XDBucketForOwnedAttributesstorage", b.dictionary(properties)),
                ], slot: holder)
            return holder
        }
        func property(
            _ slot: PropertyListValue?, _ chain: [String], _ name: String, owner: PropertyListValue, optional: Bool,
            _ settings: [(String, PropertyListValue)], stereotypeName: String
        ) -> PropertyListValue {
            let me = slot ?? b.reserve()
            let common = stereotype(
                me, "XD_PPropStereotype",
                [("XD_PPSK_isOptional", .bool(optional)), ("XD_PPSK_isTransient", .bool(false))])
            let specific = stereotype(me, stereotypeName, settings)
            b.instance(
                chain + ["XDPMProperty", "XDUMLPropertyImp"],
                [
                    ("_name", b.string(name)), ("_owner", owner),
                    (
                        "XDBucketForStereotypesstorage",
                        b.dictionary([(b.string("XD_PPropStereotype"), common), (b.string(stereotypeName), specific)])
                    ),
                ], slot: me)
            return me
        }
        func attribute(
            _ name: String, owner: PropertyListValue, type: Int64, optional: Bool = true, defaultValue: String? = nil
        ) -> PropertyListValue {
            var settings: [(String, PropertyListValue)] = [("XD_PAttK_attributeType", .integer(type))]
            if let defaultValue { settings.append(("XD_PAttK_defaultValueAsString", b.string(defaultValue))) }
            return property(
                nil, ["XDPMAttribute"], name, owner: owner, optional: optional, settings,
                stereotypeName: "XD_PAtt_Stereotype")
        }
        func entity(
            _ slot: PropertyListValue, _ name: String, _ properties: [(String, PropertyListValue)],
            parent: PropertyListValue? = nil
        ) {
            var generalizations: [PropertyListValue] = []
            if let parent {
                generalizations.append(
                    b.instance(
                        ["XDUMLGeneralizationImp"], [("_general", parent), ("_specific", slot), ("_owner", slot)]))
            }
            let settings = stereotype(
                slot, "XD_PStereotype",
                [("XD_PSK_entityClassName", b.string(name)), ("XD_PSK_isAbstract", .bool(false))])
            b.instance(
                ["XDPMEntity", "XDUMLClassImp"],
                [
                    ("_name", b.string(name)), ("_owner", package), ("_isAbstract", .bool(false)),
                    (
                        "XDBucketForGeneralizationsstorage",
                        b.array(generalizations, chain: ["NSMutableArray", "NSArray"])
                    ),
                    ("XDBucketForOwnedAttributesstorage", b.dictionary(properties.map { (b.string($0.0), $0.1) })),
                    ("XDBucketForStereotypesstorage", b.dictionary([(b.string("XD_PStereotype"), settings)])),
                ], slot: slot)
        }
        _ = property(
            books, ["XDPMRelationship"], "books", owner: author, optional: true,
            [
                ("XD_PRK_destination", book), ("XD_PRK_inverseRelationship", bookAuthor),
                ("XD_PRK_isToMany", .bool(true)),
                ("XD_PRK_ordered", .bool(true)), ("XD_PRK_deleteRule", .integer(2)), ("XD_PRK_minCount", .integer(0)),
                ("XD_PRK_maxCount", .integer(0)),
            ], stereotypeName: "XD_PRel_Stereotype")
        _ = property(
            bookAuthor, ["XDPMRelationship"], "author", owner: book, optional: true,
            [
                ("XD_PRK_destination", destinationOfAuthor ? author : .uid(0)), ("XD_PRK_inverseRelationship", books),
                ("XD_PRK_isToMany", .bool(false)),
                ("XD_PRK_deleteRule", .integer(1)), ("XD_PRK_maxCount", .integer(1)),
            ], stereotypeName: "XD_PRel_Stereotype")
        entity(
            author, "Author",
            [("name", attribute("name", owner: author, type: 700, optional: false)), ("books", books)])
        entity(
            book, "Book",
            [
                ("title", attribute("title", owner: book, type: attributeTypeOfTitle)),
                ("pages", attribute("pages", owner: book, type: 200, defaultValue: "1")), ("author", bookAuthor),
            ])
        entity(novel, "Novel", [("genre", attribute("genre", owner: novel, type: 700))], parent: book)
        b.instance(
            ["XDModelPackage"],
            [
                ("_owner", .uid(0)), ("_xd_owningModel", root),
                (
                    "XDBucketForClassesstorage",
                    b.dictionary([(b.string("Author"), author), (b.string("Book"), book), (b.string("Novel"), novel)])
                ),
            ], slot: package)
        b.instance(
            [rootClass, "XDModel"],
            [
                ("_xd_rootPackage", package), ("_modelVersionIdentifier", b.string("")),
                ("_configurationsByName", b.dictionary([])),
            ], slot: root)
        return b.archive(root: root)
    }

    static let sameModelAsXML = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Author" representedClassName="Author">
                <attribute name="name" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
            </entity>
            <entity name="Book" representedClassName="Book">
                <attribute name="pages" optional="YES" attributeType="Integer 32" defaultValueString="1"/>
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
            </entity>
            <entity name="Novel" representedClassName="Novel" parentEntity="Book">
                <attribute name="genre" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """

    func write(_ bytes: [UInt8], version: String, in bundle: String) throws {
        try FileManager.default.createDirectory(
            atPath: bundle + "/\(version).xcdatamodel", withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: bundle + "/\(version).xcdatamodel/elements"))
    }

    func testAnArchivedModelEqualsTheSameModelWrittenAsXML() throws {
        let scratch = ScratchDirectory()
        let bundle = scratch.file("Library.xcdatamodeld")
        try write(Self.archive(), version: "Library", in: bundle)
        try FileManager.default.createDirectory(
            atPath: bundle + "/Library 2.xcdatamodel", withIntermediateDirectories: true)
        try Self.sameModelAsXML.write(
            toFile: bundle + "/Library 2.xcdatamodel/contents", atomically: true, encoding: .utf8)
        let set = try ModelVersionSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["Library", "Library 2"])
        let archived = try XCTUnwrap(set.models["Library"])
        let xml = try XCTUnwrap(set.models["Library 2"])
        XCTAssertEqual(archived.entity(named: "Novel")?.parentName, "Book")
        XCTAssertEqual(archived.entity(named: "Author")?.relationship(named: "books")?.isOrdered, true)
        XCTAssertEqual(archived.entity(named: "Book")?.attribute(named: "pages")?.defaultValue, .integer(1))
        for entity in xml.entities {
            XCTAssertEqual(archived.entity(named: entity.name)?.versionHash, entity.versionHash, entity.name)
        }
        XCTAssertEqual(
            archived.jsonText(),
            try ManagedObjectModel(contentsOf: bundle + "/Library 2.xcdatamodel").jsonText()
                .replacingOccurrences(of: "\"Library 2\"", with: "\"Library\""))
    }

    func testDamagedArchivesAreRefusedNamingWhatIsWrong() throws {
        let cases: [([UInt8], String)] = [
            (Self.archive(rootClass: "NSObject"), "not an XDPMModel"),
            (Self.archive(attributeTypeOfTitle: 12345), "attribute type code 12345"),
            (Self.archive(destinationOfAuthor: false), "'Book.author' has no destination"),
            (Array(Self.archive().prefix(60)), "not a readable binary property list"),
        ]
        for (bytes, expected) in cases {
            let scratch = ScratchDirectory()
            let bundle = scratch.file("Library.xcdatamodeld")
            try write(bytes, version: "Library", in: bundle)
            XCTAssertThrowsError(try ManagedObjectModel(contentsOf: bundle + "/Library.xcdatamodel")) { error in
                XCTAssertEqual((error as? MigrationError)?.code, .invalidModel, expected)
                XCTAssertTrue(
                    "\(error)".contains(expected) && "\(error)".contains("Library.xcdatamodel/elements"), "\(error)")
            }
        }
    }
}
