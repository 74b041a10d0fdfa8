import Foundation
import XCTest

@testable import CDMigrate

/// External binary data (attributes with `allowsExternalBinaryDataStorage`): read as their real
/// bytes, written as Core Data writes them, their files carried with the store, the source's
/// folder untouched, a missing file counted.
final class ExternalBinaryDataTests: XCTestCase {
    typealias Fixture = ExternalDataFixture

    /// The inferred mapping of two models with `policy` on its entity mapping.
    static func inferred(_ source: ManagedObjectModel, _ destination: ManagedObjectModel, policy: String) throws
        -> MappingModel
    {
        let text = try MappingModel.inferred(from: source, to: destination).jsonText()
        guard let mappings = text.range(of: "\"entityMappings\""),
            let range = text.range(of: "\"name\"", range: mappings.upperBound..<text.endIndex)
        else { throw MigrationError(.invalidMapping, "no entity mapping") }
        return try MappingModel(
            json:
                text.replacingCharacters(in: range, with: "\"policy\": \"\(policy)\", \"name\""))
    }

    func testTheCommittedFixtureHoldsWhatTheHelperWrites() throws {
        let scratch = ScratchDirectory()
        let fresh = scratch.file("fresh/photos.sqlite")
        try FileManager.default.createDirectory(atPath: scratch.file("fresh"), withIntermediateDirectories: true)
        try Fixture.write(at: fresh)
        let committed = Fixture.modelsFolder + "/photos.sqlite"
        for column in ["ZIMAGE", "ZINFO"] {
            XCTAssertEqual(try Fixture.rawColumns(committed, column), try Fixture.rawColumns(fresh, column), column)
        }
        XCTAssertEqual(
            Fixture.snapshot(ExternalBinaryData.supportFolder(forStore: committed)),
            Fixture.snapshot(ExternalBinaryData.supportFolder(forStore: fresh)))
        // Core Data's own bytes: marker, upper-case UUID, NUL.
        let raw = try Fixture.rawColumns(committed)
        XCTAssertEqual(raw["external"]??.first, 2)
        XCTAssertEqual(raw["external"]??.last, 0)
        XCTAssertEqual(raw["external"]??.count, 38)
        XCTAssertEqual(raw["inline"]??.first, 1)
    }

    func testTheSupportFolderIsNamedAfterTheStoreWithoutItsExtension() {
        XCTAssertEqual(
            ExternalBinaryData.folder(forStore: "/a/b/moments.sqlite"), "/a/b/.moments_SUPPORT/_EXTERNAL_DATA")
        XCTAssertEqual(ExternalBinaryData.folder(forStore: "/a/Paste"), "/a/.Paste_SUPPORT/_EXTERNAL_DATA")
        XCTAssertEqual(ExternalBinaryData.folder(forStore: "/a/db.v2.sqlite"), "/a/.db.v2_SUPPORT/_EXTERNAL_DATA")
        XCTAssertEqual(ExternalBinaryData.folder(forStore: "/a/.hidden"), "/a/..hidden_SUPPORT/_EXTERNAL_DATA")
    }

    func testReadingGivesTheRealBytesInlineOrExternalAndCountsAMissingFile() throws {
        let scratch = ScratchDirectory()
        let path = try Fixture.copy(into: scratch.path)
        let store = try PersistentStore.open(at: path, model: try Fixture.model("v1"), readOnly: true)
        defer { store.close() }
        var values: [String: (Value, Value)] = [:]
        for object in try fetchAll(store, "Photo") {
            values[(try object.value(forKey: "name")).stringValue ?? ""] = (
                try object.value(forKey: "image"), try object.value(forKey: "info")
            )
        }
        XCTAssertEqual(values["inline"]?.0, .binary(Fixture.inlineImage))
        XCTAssertEqual(values["inline"]?.1, .binary(Fixture.inlineInfo))
        XCTAssertEqual(values["external"]?.0, .binary(Fixture.externalImage))
        XCTAssertEqual(values["external"]?.1, .binary(Fixture.externalInfo))
        XCTAssertEqual(values["small-file"]?.0, .binary(Fixture.smallFileImage))
        XCTAssertEqual(values["missing"]?.0, .null)
        XCTAssertEqual(values["none"]?.0, .null)
        XCTAssertEqual(
            store.externalData.missingFiles, [ExternalBinaryData.folder(forStore: path) + "/" + Fixture.missingFileUUID]
        )
    }

    func testAColumnWithoutAKnownMarkerIsAClearError() throws {
        let scratch = ScratchDirectory()
        let path = try Fixture.copy(into: scratch.path)
        let database = try SQLiteDatabase(path: path, mode: .readWrite)
        try database.run("UPDATE ZPHOTO SET ZIMAGE = x'07414243' WHERE ZNAME = 'inline'")
        // "../etc/passwd"
        try database.run("UPDATE ZPHOTO SET ZIMAGE = x'022E2E2F6574632F70617373776400' WHERE ZNAME = 'none'")
        database.close()
        let store = try PersistentStore.open(at: path, model: try Fixture.model("v1"), readOnly: true)
        defer { store.close() }
        var request = FetchRequest(entityName: "Photo")
        request.sqlWhere = "t.ZNAME = 'inline'"
        XCTAssertThrowsError(try store.fetch(request)) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(message.contains("0x7") && message.contains("Photo.image"), message)
        }
        request.sqlWhere = "t.ZNAME = 'none'"
        XCTAssertThrowsError(try store.fetch(request)) { error in
            XCTAssertTrue(((error as? MigrationError)?.message ?? "").contains("not a UUID"), "\(error)")
        }
    }

    func testAMigrationWritesCoreDataBytesAndCarriesTheFilesLeavingTheSourceFolderUntouched() throws {
        let scratch = ScratchDirectory()
        let source = try Fixture.copy(into: scratch.path)
        let sourceFolder = FileIO.directory(of: source)
        let before = Fixture.snapshot(sourceFolder)
        let destination = scratch.file("out/photos-v2.sqlite")
        try FileManager.default.createDirectory(atPath: scratch.file("out"), withIntermediateDirectories: true)
        let v1 = try Fixture.model("v1")
        let v2 = try Fixture.model("v2")
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        let report = try manager.migrateStore(from: source, to: destination)

        XCTAssertEqual(report.missingExternalDataFiles, 1)
        XCTAssertTrue(
            report.warnings.contains { $0.contains(Fixture.missingFileUUID) && $0.contains("nil") },
            "\(report.warnings)")
        let missing = report.losses.losses.filter { $0.kind == .externalData }
        XCTAssertEqual(
            missing.map { "\($0.entityName).\($0.propertyName ?? "")" }, ["Photo.image"],
            "the loss report names the attribute")
        XCTAssertEqual(missing.map { $0.count }, [1])
        XCTAssertEqual(missing.map { $0.isIntended }, [false])
        XCTAssertFalse(report.mappings.contains { $0.instancesBySQL }, "markers must not be copied by SQL")
        XCTAssertEqual(Fixture.snapshot(sourceFolder), before, "the source's folder is untouched")
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: scratch.file("out"))),
            ["photos-v2.sqlite", ".photos-v2_SUPPORT"],
            "no temporary file or folder is left")

        let raw = try Fixture.rawColumns(destination)
        XCTAssertEqual(raw["inline"], [1] + Fixture.inlineImage)
        XCTAssertEqual(
            raw["external"], Fixture.reference(Fixture.imageFileUUID), "an unchanged value keeps its file's UUID")
        XCTAssertEqual(raw["small-file"], [1] + Fixture.smallFileImage, "below the threshold a value goes into the row")
        XCTAssertEqual(raw["missing"], .some(nil))
        XCTAssertEqual(
            try Fixture.rawColumns(destination, "ZINFO")["external"], Fixture.reference(Fixture.infoFileUUID))

        let folder = ExternalBinaryData.folder(forStore: destination)
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: folder)),
            [Fixture.imageFileUUID, Fixture.infoFileUUID])
        XCTAssertEqual(
            FileManager.default.contents(atPath: folder + "/" + Fixture.imageFileUUID), Data(Fixture.externalImage))
        XCTAssertTrue(
            StoreFiles.sameFile(
                folder + "/" + Fixture.imageFileUUID,
                ExternalBinaryData.folder(forStore: source) + "/" + Fixture.imageFileUUID),
            "hard-linked on one file system")

        // Read back through the engine: the same bytes.
        let store = try PersistentStore.open(at: destination, model: v2, readOnly: true)
        defer { store.close() }
        let external = try fetchAll(store, "Photo").first { (try? $0.value(forKey: "name")) == .string("external") }
        XCTAssertEqual(try external?.value(forKey: "image"), .binary(Fixture.externalImage))
    }

    func testAPolicyReadsTheRealBytesAndAChangedValueGetsANewFile() throws {
        final class Reverse: EntityMigrationPolicy {
            static var seen: [Int] = []
            override func createDestinationInstances(
                forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
            ) throws {
                try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
                if case .binary(let bytes) = try source.value(forKey: "image") {
                    Reverse.seen.append(bytes.count)
                    try manager.destinationStore?.flush()  // the row is written: the change below is an UPDATE
                    for destination in try manager.destinationInstances(
                        forEntityMappingName: mapping.name, sourceInstances: [source])
                    {
                        try destination.setValue(.binary(bytes.reversed()), forKey: "image")
                    }
                }
            }
        }
        Reverse.seen = []
        let scratch = ScratchDirectory()
        let source = try Fixture.copy(into: scratch.path)
        let destination = scratch.file("reversed.sqlite")
        let v1 = try Fixture.model("v1")
        let v2 = try Fixture.model("v2")
        let mapping = try Self.inferred(v1, v2, policy: "Reverse")
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        manager.registerPolicy(named: "Reverse") { Reverse() }
        try manager.migrateStore(from: source, to: destination)
        XCTAssertEqual(
            Reverse.seen.sorted(),
            [Fixture.inlineImage.count, Fixture.smallFileImage.count, Fixture.externalImage.count])

        let raw = try Fixture.rawColumns(destination)
        guard let reference = raw["external"] ?? nil else { return XCTFail("no external reference") }
        XCTAssertEqual(reference.first, 2)
        XCTAssertEqual(reference.last, 0)
        let uuid = String(decoding: reference.dropFirst().dropLast(), as: UTF8.self)
        XCTAssertNotEqual(uuid, Fixture.imageFileUUID, "a changed value gets a file of its own")
        XCTAssertEqual(uuid, uuid.uppercased())
        XCTAssertEqual(
            FileManager.default.contents(atPath: ExternalBinaryData.folder(forStore: destination) + "/" + uuid),
            Data(Fixture.externalImage.reversed()))
        XCTAssertEqual(raw["inline"], [1] + Array(Fixture.inlineImage.reversed()))
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: ExternalBinaryData.folder(forStore: destination))),
            [uuid, Fixture.infoFileUUID], "the file of the replaced value is not left behind")
        XCTAssertEqual(
            FileManager.default.contents(
                atPath: ExternalBinaryData.folder(forStore: source) + "/" + Fixture.imageFileUUID),
            Data(Fixture.externalImage), "the source's file stays")
    }

    func testInPlaceMigrationKeepsTheFilesOfUnchangedValues() throws {
        let scratch = ScratchDirectory()
        let path = try Fixture.copy(into: scratch.path)
        let folder = ExternalBinaryData.folder(forStore: path)
        let imageFile = folder + "/" + Fixture.imageFileUUID
        let inode = try FileManager.default.attributesOfItem(atPath: imageFile)[.systemFileNumber] as? Int
        let v1 = try Fixture.model("v1")
        let v2 = try Fixture.model("v2")
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        let report = try manager.migrateStoreInPlace(at: path)
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: FileIO.directory(of: path))),
            ["photos.sqlite", ".photos_SUPPORT"])
        XCTAssertEqual(report.missingExternalDataFiles, 1)
        XCTAssertEqual(try Fixture.rawColumns(path)["external"], Fixture.reference(Fixture.imageFileUUID))
        XCTAssertEqual(
            try FileManager.default.attributesOfItem(atPath: imageFile)[.systemFileNumber] as? Int, inode,
            "the file itself is kept")
        XCTAssertEqual(FileManager.default.contents(atPath: imageFile), Data(Fixture.externalImage))
        let store = try PersistentStore.open(at: path, model: v2, readOnly: true)
        defer { store.close() }
        let external = try fetchAll(store, "Photo").first { (try? $0.value(forKey: "name")) == .string("external") }
        XCTAssertEqual(try external?.value(forKey: "info"), .binary(Fixture.externalInfo))
    }

    func testAFailedMigrationLeavesNoExternalFileAndTheSourceFolderUntouched() throws {
        final class FailAtTheEnd: EntityMigrationPolicy {
            override func createDestinationInstances(
                forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
            ) throws {
                try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
                for destination in try manager.destinationInstances(
                    forEntityMappingName: mapping.name, sourceInstances: [source])
                {
                    try destination.setValue(.binary(Fixture.pattern(300_000, seed: 9)), forKey: "image")
                }
            }
            override func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
                throw MigrationError(.entityMigrationPolicy, "failing on purpose")
            }
        }
        let scratch = ScratchDirectory()
        let source = try Fixture.copy(into: scratch.path)
        let before = Fixture.snapshot(FileIO.directory(of: source))
        let v1 = try Fixture.model("v1")
        let v2 = try Fixture.model("v2")
        for inPlace in [false, true] {
            let mapping = try Self.inferred(v1, v2, policy: "FailAtTheEnd")
            let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
            manager.registerPolicy(named: "FailAtTheEnd") { FailAtTheEnd() }
            let destination = scratch.file("failed.sqlite")
            XCTAssertThrowsError(
                inPlace
                    ? try manager.migrateStoreInPlace(at: source)
                    : try manager.migrateStore(from: source, to: destination))
            let sourceFolderName = (FileIO.directory(of: source) as NSString).lastPathComponent
            XCTAssertEqual(
                try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0 != sourceFolderName }, [],
                "nothing is left beside the destination")
            XCTAssertEqual(Fixture.snapshot(FileIO.directory(of: source)), before, "in place: \(inPlace)")
        }
    }

    func testDroppingExternalStorageWritesThePlainBytes() throws {
        let scratch = ScratchDirectory()
        let source = try Fixture.copy(into: scratch.path)
        let destination = scratch.file("plain.sqlite")
        let v1 = try Fixture.model("v1")
        let plain = try Fixture.model("plain")
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: plain, mappingModel: try MappingModel.inferred(from: v1, to: plain))
        let report = try manager.migrateStore(from: source, to: destination)
        XCTAssertEqual(report.missingExternalDataFiles, 1)
        let raw = try Fixture.rawColumns(destination)
        XCTAssertEqual(raw["inline"], Fixture.inlineImage)
        XCTAssertEqual(raw["external"], Fixture.externalImage)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ExternalBinaryData.supportFolder(forStore: destination)))
    }

    func testPlainBytesGainingExternalStorageAreWrittenWithMarkersAndFiles() throws {
        let scratch = ScratchDirectory()
        let plainStore = scratch.file("plain.sqlite")
        let plain = try Fixture.model("plain")
        let v2 = try Fixture.model("v2")
        try makeStore(plainStore, plain) { store in
            try insert(store, "Photo", ["name": .string("big"), "image": .binary(Fixture.externalImage)])
            try insert(store, "Photo", ["name": .string("small"), "image": .binary(Fixture.inlineImage)])
        }
        XCTAssertEqual(try Fixture.rawColumns(plainStore)["big"], Fixture.externalImage)
        let destination = scratch.file("v2.sqlite")
        let manager = try MigrationManager(
            sourceModel: plain, destinationModel: v2, mappingModel: try MappingModel.inferred(from: plain, to: v2))
        XCTAssertEqual(try manager.migrateStore(from: plainStore, to: destination).missingExternalDataFiles, 0)
        let raw = try Fixture.rawColumns(destination)
        XCTAssertEqual(raw["small"], [1] + Fixture.inlineImage)
        guard let reference = raw["big"] ?? nil else { return XCTFail("no reference") }
        XCTAssertEqual(reference.count, 38)
        let uuid = String(decoding: reference.dropFirst().dropLast(), as: UTF8.self)
        XCTAssertEqual(
            FileManager.default.contents(atPath: ExternalBinaryData.folder(forStore: destination) + "/" + uuid),
            Data(Fixture.externalImage))
    }

    func testAChainCarriesTheFilesThroughItsTemporaryStores() throws {
        let scratch = ScratchDirectory()
        let models = scratch.file("models")
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        for version in ["v1", "v2", "v3"] {
            try FileManager.default.copyItem(
                atPath: Fixture.modelsFolder + "/photos-\(version).json", toPath: models + "/photos-\(version).json")
        }
        let set = try ModelSet(contentsOf: models)
        for (inPlace, fusing) in [(false, false), (true, false), (false, true), (true, true)] {
            let source = try Fixture.copy(into: scratch.path)
            let sourceFolderBefore = Fixture.snapshot(FileIO.directory(of: source))
            let plan = try MigrationPlan(storeAt: source, models: set)
            XCTAssertEqual(plan.stages.count, 2)
            let chain = StagedMigrationManager(plan: plan)
            chain.fusesSteps = fusing
            let result = inPlace ? source : scratch.file("chain-\(UUID().uuidString).sqlite")
            let report = inPlace ? try chain.migrateStoreInPlace() : try chain.migrateStore(to: result)
            XCTAssertEqual(report.stages.map { $0.report.missingExternalDataFiles }, fusing ? [1] : [1, 0])
            XCTAssertEqual(try Fixture.rawColumns(result)["external"], Fixture.reference(Fixture.imageFileUUID))
            XCTAssertEqual(
                FileManager.default.contents(
                    atPath: ExternalBinaryData.folder(forStore: result) + "/" + Fixture.imageFileUUID),
                Data(Fixture.externalImage))
            if !inPlace { XCTAssertEqual(Fixture.snapshot(FileIO.directory(of: source)), sourceFolderBefore) }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: FileIO.directory(of: result)).filter {
                $0.contains("cdmigrate")
            }
            XCTAssertEqual(leftovers, [])
        }
    }

    func testADestinationAppearingBeforeTheHandOverTakesBackTheLinkedFiles() throws {
        let scratch = ScratchDirectory()
        let source = try Fixture.copy(into: scratch.path)
        let destination = scratch.file("late.sqlite")
        let v1 = try Fixture.model("v1")
        let v2 = try Fixture.model("v2")
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        manager.progressHandler = { progress in
            if progress.fraction >= 1, !FileManager.default.fileExists(atPath: destination) {
                _ = FileManager.default.createFile(atPath: destination, contents: Data("someone else's".utf8))
            }
            return true
        }
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: destination)) { error in
            XCTAssertTrue(((error as? MigrationError)?.message ?? "").contains("appeared"), "\(error)")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: destination), Data("someone else's".utf8))
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: ExternalBinaryData.supportFolder(forStore: destination)),
            "the files linked for the hand-over are taken back")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains("late") },
            ["late.sqlite"])
        XCTAssertEqual(
            FileManager.default.contents(
                atPath: ExternalBinaryData.folder(forStore: source) + "/" + Fixture.imageFileUUID),
            Data(Fixture.externalImage), "the source's file stays")
    }

    func testABatchPolicyReadsTheRealBytesAndItsDefaultCarriesTheFiles() throws {
        final class Batches: EntityMigrationPolicy {
            static var images: [Value] = []
            override var createsDestinationInstancesInBatches: Bool { true }
            override func createDestinationInstances(
                forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
            ) throws {
                Batches.images += try batch.values(ofAttribute: "image")
                try batch.applyDefault()
            }
        }
        Batches.images = []
        let scratch = ScratchDirectory()
        let source = try Fixture.copy(into: scratch.path)
        let destination = scratch.file("batches.sqlite")
        let v1 = try Fixture.model("v1")
        let v2 = try Fixture.model("v2")
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try Self.inferred(v1, v2, policy: "Batches"))
        manager.registerPolicy(named: "Batches") { Batches() }
        let report = try manager.migrateStore(from: source, to: destination)
        XCTAssertEqual(report.missingExternalDataFiles, 1)
        XCTAssertEqual(
            Batches.images,
            [
                .binary(Fixture.inlineImage), .binary(Fixture.externalImage), .binary(Fixture.smallFileImage), .null,
                .null,
            ])
        XCTAssertEqual(try Fixture.rawColumns(destination)["external"], Fixture.reference(Fixture.imageFileUUID))
        XCTAssertEqual(
            FileManager.default.contents(
                atPath: ExternalBinaryData.folder(forStore: destination) + "/" + Fixture.imageFileUUID),
            Data(Fixture.externalImage))
    }

    func testTheCensusCountsTheFilesTheReferencesAndTheMissingOnesWithoutTouchingTheFolder() throws {
        let scratch = ScratchDirectory()
        let path = try Fixture.copy(into: scratch.path)
        let before = Fixture.snapshot(FileIO.directory(of: path))
        let census = try ExternalDataCensus.readSource(at: path)
        XCTAssertEqual(census.files, 3)
        XCTAssertEqual(census.references, 4)
        XCTAssertEqual(census.missingFiles, [ExternalBinaryData.folder(forStore: path) + "/" + Fixture.missingFileUUID])
        XCTAssertEqual(Fixture.snapshot(FileIO.directory(of: path)), before)
    }

    func testTheCommandLineInspectsAndReportsExternalData() throws {
        try CommandLineTool.requireBuilt()
        let scratch = ScratchDirectory()
        let path = try Fixture.copy(into: scratch.path)
        let inspected = try CommandLineTool.run(["inspect", path, "--json"])
        XCTAssertEqual(inspected.status, 0, inspected.err)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(inspected.out.utf8)) as? [String: Any])
        let external = try XCTUnwrap(document["externalData"] as? [String: Any])
        XCTAssertEqual(external["files"] as? Int, 3)
        XCTAssertEqual(external["references"] as? Int, 4)
        XCTAssertEqual(external["missing"] as? Int, 1)
        let text = try CommandLineTool.run(["inspect", path])
        XCTAssertTrue(text.out.contains("external binary data: 3 files"), text.out)
        XCTAssertTrue(text.err.contains(Fixture.missingFileUUID), text.err)

        let destination = scratch.file("out.sqlite")
        let mapping = scratch.file("v1-v2.json")
        try MappingModel.inferred(from: try Fixture.model("v1"), to: try Fixture.model("v2")).jsonText().write(
            toFile: mapping, atomically: true, encoding: .utf8)
        let migrated = try CommandLineTool.run([
            "migrate", path, "--to", destination, "--json", "--source-model", Fixture.modelsFolder + "/photos-v1.json",
            "--destination-model", Fixture.modelsFolder + "/photos-v2.json", "--mapping", mapping,
        ])
        XCTAssertEqual(migrated.status, 0, migrated.err)
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(migrated.out.utf8)) as? [String: Any])
        XCTAssertEqual((result["report"] as? [String: Any])?["missingExternalDataFiles"] as? Int, 1, migrated.out)
        XCTAssertEqual(
            FileManager.default.contents(
                atPath: ExternalBinaryData.folder(forStore: destination) + "/" + Fixture.imageFileUUID),
            Data(Fixture.externalImage))
    }

    func testEveryModelReaderKeepsExternalStorage() throws {
        // Xcode's XML.
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Photo" representedClassName="Photo" syncable="YES">
                    <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                    <attribute name="thumbnail" optional="YES" attributeType="Binary"/>
                </entity>
            </model>
            """
        let document = try XMLElement.parse(bytes: Array(xml.utf8), name: "Photos.xcdatamodel/contents")
        let xcode = try XcodeModelReader.model(document: document, file: "Photos.xcdatamodel/contents", name: "Photos")
        XCTAssertEqual(xcode.entity(named: "Photo")?.attributesByName["image"]?.allowsExternalBinaryDataStorage, true)
        XCTAssertEqual(
            xcode.entity(named: "Photo")?.attributesByName["thumbnail"]?.allowsExternalBinaryDataStorage, false)
        // JSON, and back.
        let json = try Fixture.model("v1")
        XCTAssertEqual(json.entity(named: "Photo")?.attributesByName["info"]?.allowsExternalBinaryDataStorage, true)
        let again = try ManagedObjectModel(json: json.jsonText())
        XCTAssertEqual(again.entity(named: "Photo")?.attributesByName["image"]?.allowsExternalBinaryDataStorage, true)
        XCTAssertEqual(again.entity(named: "Photo")?.versionHash, json.entity(named: "Photo")?.versionHash)
        // The flag is part of the version hash: v2 and plain differ only by it.
        XCTAssertNotEqual(
            try Fixture.model("v2").entity(named: "Photo")?.versionHash,
            try Fixture.model("plain").entity(named: "Photo")?.versionHash)
        // A compiled model: NSFlagsKey bit 4.
        let compiled = try CompiledModelReader.model(
            fromArchive: CompiledModelTests.handWrittenModel(packedFlags: false), name: "Hand")
        let attributes = compiled.entities.flatMap { $0.attributes }
        XCTAssertEqual(attributes.first { $0.name == "cache" }?.allowsExternalBinaryDataStorage, true)
        XCTAssertEqual(attributes.first { $0.name == "title" }?.allowsExternalBinaryDataStorage, false)
    }

    func testAChainWhoseStoreIsAtTheTargetCopiesItWithItsFiles() throws {
        let scratch = ScratchDirectory()
        let models = scratch.file("models")
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixture.modelsFolder + "/photos-v1.json", toPath: models + "/photos-v1.json")
        let source = try Fixture.copy(into: scratch.path)
        let before = Fixture.snapshot(FileIO.directory(of: source))
        let chain = StagedMigrationManager(
            plan: try MigrationPlan(storeAt: source, models: try ModelSet(contentsOf: models)))
        let destination = scratch.file("copy.sqlite")
        XCTAssertTrue(try chain.migrateStore(to: destination).copied)
        let folder = ExternalBinaryData.folder(forStore: destination)
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: folder)),
            [Fixture.imageFileUUID, Fixture.infoFileUUID, Fixture.smallFileUUID])
        XCTAssertEqual(try Fixture.rawColumns(destination)["external"], Fixture.reference(Fixture.imageFileUUID))
        XCTAssertEqual(Fixture.snapshot(FileIO.directory(of: source)), before)
    }
}
