import Foundation
import XCTest

@testable import CDMigrate

/// Stores written by Apple's Core Data, read back through the store layer.
final class AppleStoreFixtureTests: XCTestCase {
    static let fixtures = TestPaths.fixtures
    static let modelDirectory = TestPaths.fixtures + "/json-models"
    static let renameVersions = ["1.0.0", "1.1.0", "1.1.2", "1.2.0", "2.0.0"]

    var temporaryDirectory: String = ""

    override func setUpWithError() throws {
        temporaryDirectory = NSTemporaryDirectory() + "cdm-apple-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: temporaryDirectory)
    }

    func copyFixture(_ relativePath: String) throws -> String {
        try copyFixtureStore(relativePath, into: temporaryDirectory)
    }

    func model(_ name: String) throws -> ManagedObjectModel {
        return try ManagedObjectModel(contentsOf: AppleStoreFixtureTests.modelDirectory + "/" + name)
    }

    // MARK: Renames stores

    func testRenamesStoresReadTheirKnownValue() throws {
        for version in AppleStoreFixtureTests.renameVersions {
            let path = try copyFixture("apple-stores/renames/Example_v\(version).sqlite")
            let model = try self.model("renames-v\(version).json")
            let store = try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: false)
            let entity = try XCTUnwrap(model.entity(named: "BasicEntity"))
            let attribute = "v\(version.replacingOccurrences(of: ".", with: "_"))_name"
            XCTAssertEqual(store.layout.table(for: entity), "ZBASICENTITY")
            XCTAssertEqual(
                store.layout.column(for: try XCTUnwrap(entity.attribute(named: attribute))),
                "Z" + attribute.uppercased())
            let objects = try store.fetch(FetchRequest(entityName: "BasicEntity"))
            XCTAssertEqual(objects.count, 1, version)
            XCTAssertEqual(try objects.first?.value(forKey: attribute), .string("A Known Value"), version)
            XCTAssertEqual(objects.first?.objectID.primaryKey, 1)
            XCTAssertEqual(objects.first?.objectID.storeIdentifier.count, 36)
            XCTAssertEqual(try store.count(FetchRequest(entityName: "BasicEntity")), 1)
            store.close()
        }
    }

    func testRenamesStoresCarryApplesVersionHashes() throws {
        for version in AppleStoreFixtureTests.renameVersions {
            let path = try copyFixture("apple-stores/renames/Example_v\(version).sqlite")
            let model = try self.model("renames-v\(version).json")
            // The JSON carries Apple's hash as an explicit versionHash: the version check passes.
            let store = try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: true)
            XCTAssertEqual(store.metadata.storeType, "SQLite")
            XCTAssertEqual(store.metadata.versionHashes["BasicEntity"], model.entity(named: "BasicEntity")?.versionHash)
            XCTAssertTrue(store.warnings.isEmpty, "\(store.warnings)")
            store.close()
        }
        // Another version's model is refused, naming the entity that differs.
        let path = try copyFixture("apple-stores/renames/Example_v1.0.0.sqlite")
        XCTAssertThrowsError(
            try PersistentStore.open(
                at: path, model: try model("renames-v2.0.0.json"), readOnly: true, checkVersion: true)
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .incompatibleVersionHash)
            XCTAssertTrue(
                e?.message.contains(
                    "BasicEntity: store hash sm18bCK1M9WnAVtqd1RcG7Ke57yR2xrq2MANgN9iySw=, model hash R48GqGb21ihZo4TIoWA+npEdk1F9o67l8ewBFun8Ls4="
                ) ?? false, e?.message ?? "")
            XCTAssertTrue(e?.message.contains("v2.0.0") ?? false, e?.message ?? "")
        }
    }

    func testAModelPropertyWithoutAColumnIsAnError() throws {
        let path = try copyFixture("apple-stores/renames/Example_v1.0.0.sqlite")
        // v1.1.0's attribute has no column in the v1.0.0 store.
        XCTAssertThrowsError(
            try PersistentStore.open(
                at: path, model: try model("renames-v1.1.0.json"), readOnly: true, checkVersion: false)
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .incompatibleVersionHash)
            let message = e?.description ?? ""
            XCTAssertTrue(message.contains("BasicEntity.v1_1_0_name") && message.contains("ZBASICENTITY"), message)
        }
    }

    // MARK: macOS Notes

    func openNotes() throws -> (PersistentStore, String) {
        let path = try copyFixture("apple-stores/macos-notes/NotesV7.storedata")
        let model = try self.model("notes-v7.json")
        XCTAssertEqual(model.entities.count, 22)
        return (try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: false), path)
    }

    func testNotesEveryEntityReadsAllItsRows() throws {
        let (store, path) = try openNotes()
        defer { store.close() }
        let raw = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { raw.close() }
        var total = 0
        for entity in store.model.entitiesInStoreOrder {
            let table = store.layout.table(for: entity)
            for includesSubentities in [true, false] {
                let numbers = store.layout.entityNumbers(of: entity, includingSubentities: includesSubentities).map(
                    String.init
                ).joined(separator: ",")
                let expected = try XCTUnwrap(
                    raw.scalar("SELECT COUNT(*) FROM \(table) WHERE Z_ENT IN (\(numbers))")?.integer)
                var request = FetchRequest(entityName: entity.name)
                request.includesSubentities = includesSubentities
                let objects = try store.fetch(request)
                XCTAssertEqual(Int64(objects.count), expected, "\(entity.name) subentities: \(includesSubentities)")
                XCTAssertEqual(try store.count(request), Int(expected))
                for object in objects {
                    // The concrete entity comes from Z_ENT.
                    XCTAssertTrue(object.entity.isKind(of: entity))
                    if !includesSubentities { XCTAssertTrue(object.entity === entity) }
                    let zEnt = try raw.scalar(
                        "SELECT Z_ENT FROM \(table) WHERE Z_PK = ?", [.integer(object.objectID.primaryKey)])?.integer
                    XCTAssertEqual(zEnt, Int64(store.layout.entityNumber(of: object.entity)))
                    // Every relationship can be read.
                    for relationship in object.entity.relationships { _ = try object.value(for: relationship) }
                }
                if !includesSubentities { total += objects.count }
            }
        }
        XCTAssertEqual(total, 2 + 7 + 3 + 3)  // accounts, folders, notes, note bodies
    }

    func testNotesLayoutMatchesTheStoreSchema() throws {
        let (store, _) = try openNotes()
        defer { store.close() }
        let model = store.model
        func entity(_ name: String) throws -> EntityDescription { try XCTUnwrap(model.entity(named: name)) }
        XCTAssertEqual(store.layout.entityNumber(of: try entity("Account")), 1)
        XCTAssertEqual(store.layout.entityNumber(of: try entity("UpdateNoteAction")), 22)
        XCTAssertEqual(store.layout.table(for: try entity("IMAPFolder")), "ZFOLDER")
        XCTAssertEqual(store.layout.table(for: try entity("MoveNoteAction")), "ZOFFLINEACTION")
        // Z<n>_ entity columns where the destination has subentities; none for a leaf destination.
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(try entity("Folder").relationship(named: "parent"))),
            .foreignKey(column: "ZPARENT", entityColumn: "Z6_PARENT", orderColumn: nil))
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(try entity("Account").relationship(named: "trashFolder"))),
            .foreignKey(column: "ZTRASHFOLDER", entityColumn: nil, orderColumn: nil))
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(try entity("NoteBody").relationship(named: "note"))),
            .foreignKey(column: "ZNOTE", entityColumn: "Z10_NOTE", orderColumn: nil))
        // The numbered collision: two sub-entities of OfflineAction each declare 'folder'.
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(try entity("FolderAction").relationship(named: "folder"))),
            .foreignKey(column: "ZFOLDER", entityColumn: "Z6_FOLDER", orderColumn: nil))
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(try entity("NoteAction").relationship(named: "folder"))),
            .foreignKey(column: "ZFOLDER1", entityColumn: "Z6_FOLDER1", orderColumn: nil))
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(try entity("Folder").relationship(named: "notes"))),
            .inverseForeignKey(table: "ZNOTE", column: "ZFOLDER", entityColumn: "Z6_FOLDER", orderColumn: nil))
        let title = try XCTUnwrap(try entity("Note").attribute(named: "title"))
        XCTAssertEqual(store.layout.column(for: title), "ZTITLE")
        XCTAssertEqual(store.layout.sqlColumn(forKeyPath: ["title"], of: try entity("IMAPNote"))?.sql, "ZTITLE")
        XCTAssertNil(store.layout.sqlColumn(forKeyPath: ["folder", "name"], of: try entity("Note")))
        XCTAssertEqual(
            store.layout.entityRestriction(for: try entity("Folder"), includingSubentities: false), "Z_ENT = 6")
        XCTAssertNil(store.layout.entityRestriction(for: try entity("Folder"), includingSubentities: true))
        XCTAssertEqual(store.layout.entityRestriction(for: try entity("Account"), includingSubentities: true), nil)
    }

    func testNotesValuesAndRelationships() throws {
        let (store, _) = try openNotes()
        defer { store.close() }
        let accounts = try store.fetch(FetchRequest(entityName: "Account"))
        XCTAssertEqual(accounts.map { $0.entity.name }, ["LocalAccount", "IMAPAccount"])
        let local = accounts[0]
        let imap = accounts[1]
        XCTAssertEqual(try local.value(forKey: "accountDescription"), "On My Mac")
        XCTAssertEqual(try local.value(forKey: "enabled"), .bool(true))
        XCTAssertEqual(try imap.value(forKey: "port"), .integer(993))
        XCTAssertEqual(try imap.value(forKey: "hostname"), "imap.mail.yahoo.com")
        XCTAssertEqual(try imap.value(forKey: "allowInsecureAuthentication"), .bool(false))

        // One-to-one Account.rootFolder ↔ Folder.account, read from both sides; the entity column says IMAPFolder.
        let imapRoot = try XCTUnwrap(try imap.value(forKey: "rootFolder").object)
        XCTAssertEqual(imapRoot.entity.name, "IMAPFolder")
        XCTAssertEqual(imapRoot.objectID.primaryKey, 5)
        XCTAssertEqual(try imapRoot.value(forKey: "name"), "RootFolder")
        XCTAssertEqual(try imapRoot.value(forKey: "uidNext"), .integer(0))
        XCTAssertEqual(try imapRoot.value(forKey: "account").object?.objectID, imap.objectID)
        // One-to-one Account.trashFolder ↔ TrashFolder.trashAccount.
        let trash = try XCTUnwrap(try local.value(forKey: "trashFolder").object)
        XCTAssertEqual(trash.entity.name, "TrashFolder")
        XCTAssertEqual(try trash.value(forKey: "name"), "Trash")
        XCTAssertEqual(try trash.value(forKey: "trashAccount").object?.objectID, local.objectID)

        // Folder tree: parent / children.
        let localRoot = try XCTUnwrap(try local.value(forKey: "rootFolder").object)
        let children = try localRoot.value(forKey: "children").elements.compactMap { $0.object }
        XCTAssertEqual(
            Set(children.map { try? $0.value(forKey: "name") }), [.string("Notes"), .string("Recovered Items")])
        let notesFolder = try XCTUnwrap(children.first { (try? $0.value(forKey: "name")) == .string("Notes") })
        XCTAssertEqual(try notesFolder.value(forKey: "parent").object?.objectID, localRoot.objectID)

        // Folder.notes ↔ Note.folder, Note.body ↔ NoteBody.note; dates as seconds since 2001.
        let notes = try notesFolder.value(forKey: "notes").elements.compactMap { $0.object }
        XCTAssertEqual(notes.map { $0.objectID.primaryKey }, [1, 4, 5])
        XCTAssertEqual(try notes[0].value(forKey: "title"), "building 4th brandy gibs")
        XCTAssertEqual(try notes[0].value(forKey: "dateCreated"), .date(413779107.097813))
        XCTAssertEqual(try notes[0].value(forKeyPath: "folder.parent.account.accountDescription"), "On My Mac")
        let body = try XCTUnwrap(try notes[0].value(forKey: "body").object)
        XCTAssertEqual(body.entity.name, "NoteBody")
        XCTAssertTrue((try body.value(forKey: "htmlString").stringValue ?? "").hasPrefix("<html><head></head><body"))
        XCTAssertEqual(try body.value(forKey: "note").object?.objectID, notes[0].objectID)
        XCTAssertEqual(try notes[0].value(forKey: "attachments"), .collection([]))

        // Fetch with an SQL condition on a sub-entity's column.
        var request = FetchRequest(entityName: "Folder", sqlWhere: "ZNAME = ?", arguments: ["Trash"])
        XCTAssertEqual(try store.fetch(request).map { $0.entity.name }, ["TrashFolder", "TrashFolder"])
        request.includesSubentities = false
        XCTAssertEqual(try store.count(request), 0)
    }

    func testNotesReadOnlyStoreRefusesWrites() throws {
        let (store, path) = try openNotes()
        defer { store.close() }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try store.insertObject(entityName: "Note")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidArgument)
            XCTAssertTrue((error as? MigrationError)?.message.contains("read-only") ?? false)
        }
        let note = try XCTUnwrap(try store.fetch(FetchRequest(entityName: "Note")).first)
        XCTAssertThrowsError(try note.setValue("changed", forKey: "title"))
        XCTAssertThrowsError(try note.setValue(nil, forKey: "folder"))
        XCTAssertThrowsError(try store.save())
        store.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    func testNotesWithoutMetadataOpensWithAWarning() throws {
        let path = try copyFixture("apple-stores/macos-notes/NotesV7.storedata")
        let store = try PersistentStore.open(
            at: path, model: try model("notes-v7.json"), readOnly: true, checkVersion: true)
        defer { store.close() }
        XCTAssertTrue(store.metadata.isEmpty)
        XCTAssertEqual(store.metadata.storeUUID, "D25E1FF7-34FB-48F8-ADB6-B1C7A89F28C0")
        XCTAssertTrue(store.warnings.contains { $0.contains("no version metadata") }, "\(store.warnings)")
    }
}
