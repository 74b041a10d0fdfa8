import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// `<mapping model>.cdmigrate.json` beside an Xcode (or compiled) mapping model declares intended
/// losses and what a policy carries, as the entity mapping's User Info would (docs/loss-report.md).
final class IntendedLossesFileTests: XCTestCase {
    /// A copy of UnCloudNotes' v2→v3 mapping model in a folder of its own, with `side` beside it.
    func mappingModel(side: String?, from version: Int = 2, withoutDateCreated: Bool = false) throws -> String {
        let directory = try TemporaryDirectory.make(prefix: "cdmigrate-sidefile")
        addTeardownBlock { TemporaryDirectory.remove(directory) }
        let path = directory + "/UnCloudNotes_v\(version)_to_v\(version + 1).xcmappingmodel"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var text = try String(
            contentsOfFile: TestPaths.fixtures
                + "/xcode/UnCloudNotes/UnCloudNotesMappingModel_v\(version)_to_v\(version + 1).xcmappingmodel/xcmapping.xml",
            encoding: .utf8)
        if withoutDateCreated {
            // Both entity mappings of Note without their dateCreated mappings: Note.dateCreated is left behind.
            for (id, owner) in [("z104", "z102"), ("z112", "z109")] {
                let object = """
                        <object type="XDDEVATTRIBUTEMAPPING" id="\(id)">
                            <attribute name="name" type="string">dateCreated</attribute>
                            <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="\(owner)"></relationship>
                        </object>

                    """
                XCTAssertTrue(text.contains(object), id)
                text = text.replacingOccurrences(of: object, with: "")
            }
            for (from, to) in [("z104 z105 z103 z110", "z105 z103 z110"), ("z106 z112", "z106")] {
                XCTAssertTrue(text.contains("idrefs=\"\(from)\""), from)
                text = text.replacingOccurrences(of: "idrefs=\"\(from)\"", with: "idrefs=\"\(to)\"")
            }
        }
        try text.write(toFile: path + "/xcmapping.xml", atomically: true, encoding: .utf8)
        if let side { try side.write(toFile: path + ".cdmigrate.json", atomically: true, encoding: .utf8) }
        return path
    }

    func testTheSideFileIsNamedAfterTheMappingModelFile() {
        XCTAssertEqual(
            IntendedLossesFile.path(forMappingModelAt: "/m/A.xcmappingmodel"), "/m/A.xcmappingmodel.cdmigrate.json")
        XCTAssertEqual(
            IntendedLossesFile.path(forMappingModelAt: "/m/A.xcmappingmodel/"), "/m/A.xcmappingmodel.cdmigrate.json")
        XCTAssertEqual(
            IntendedLossesFile.path(forMappingModelAt: "/m/A.xcmappingmodel/xcmapping.xml"),
            "/m/A.xcmappingmodel.cdmigrate.json")
        XCTAssertEqual(IntendedLossesFile.path(forMappingModelAt: "/m/A.cdm"), "/m/A.cdm.cdmigrate.json")
    }

    func testTheSideFileDeclaresIntendedLossesOfAnXcodeMappingModel() throws {
        let path = try mappingModel(
            side:
                #"{"entityMappings": {"NoteToNote": {"cdmigrate.intendedLosses": "displayIndex", "cdmigrate.carriedByPolicy": "title"}}}"#
        )
        let mapping = try MappingModel(
            contentsOf:
                path, sourceModel: try UnCloudNotes.model(version: 2),
            destinationModel: try UnCloudNotes.model(version: 3))
        let note = try XCTUnwrap(mapping.entityMapping(named: "NoteToNote"))
        XCTAssertEqual(IntendedLosses.names(of: note), ["displayIndex"])
        XCTAssertEqual(IntendedLosses.names(of: note, key: IntendedLosses.carriedByPolicyKey), ["title"])
        // Without the file: nothing declared.
        let plain = try MappingModel(
            contentsOf:
                try mappingModel(side: nil), sourceModel: try UnCloudNotes.model(version: 2),
            destinationModel: try UnCloudNotes.model(version: 3))
        XCTAssertEqual(IntendedLosses.names(of: try XCTUnwrap(plain.entityMapping(named: "NoteToNote"))), [])
    }

    /// A run that loses something the mapping model does not declare fails when strict; the side
    /// file declaring it (`*`) makes the same losses intended and the strict run passes.
    func testAStrictRunAcceptsWhatTheSideFileDeclares() throws {
        let v2 = try UnCloudNotes.model(version: 2)
        let v3 = try UnCloudNotes.model(version: 3)
        let directory = try TemporaryDirectory.make(prefix: "cdmigrate-sidefile-run")
        addTeardownBlock { TemporaryDirectory.remove(directory) }
        let store = directory + "/v2.sqlite"
        _ = try UnCloudNotes.generateSource(version: 2, at: store, count: 12)
        let database = try SQLiteDatabase(path: store, mode: .readWrite)
        try database.exec("UPDATE ZNOTE SET ZDATECREATED = 700000000")
        database.close()
        let plain = try MappingModel(
            contentsOf:
                try mappingModel(side: nil, withoutDateCreated: true), sourceModel: v2, destinationModel: v3)
        let lenient = try MigrationManager(sourceModel: v2, destinationModel: v3, mappingModel: plain)
        let report = try lenient.migrateStore(from: store, to: directory + "/a.sqlite")
        let lossy = Set(report.losses.losses.compactMap { $0.entityMappingName })
        guard !lossy.isEmpty else {
            return XCTFail(
                "the v2 → v3 mapping model without its dateCreated mapping was expected to leave something behind: \(report.losses.losses)"
            )
        }
        XCTAssertFalse(report.losses.unintended.isEmpty)
        let refused = try MigrationManager(sourceModel: v2, destinationModel: v3, mappingModel: plain)
        refused.failsOnUnintendedLoss = true
        XCTAssertThrowsError(try refused.migrateStore(from: store, to: directory + "/refused.sqlite"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/refused.sqlite"))
        let entries = lossy.sorted().map { "\"\($0)\": {\"cdmigrate.intendedLosses\": \"*\"}" }.joined(separator: ", ")
        let declared = try MappingModel(
            contentsOf:
                try mappingModel(side: "{\"entityMappings\": {\(entries)}}", withoutDateCreated: true), sourceModel: v2,
            destinationModel: v3)
        let strict = try MigrationManager(sourceModel: v2, destinationModel: v3, mappingModel: declared)
        strict.failsOnUnintendedLoss = true
        let accepted = try strict.migrateStore(from: store, to: directory + "/b.sqlite")
        XCTAssertTrue(accepted.losses.unintended.filter { $0.kind != .instances }.isEmpty, "\(accepted.losses.losses)")
        XCTAssertEqual(
            accepted.losses.losses.filter { $0.isIntended }.map { $0.count }.reduce(0, +),
            report.losses.losses.filter { $0.kind != .instances }.map { $0.count }.reduce(0, +))
    }

    func testAMistakenSideFileIsAnInvalidMappingNamingTheFile() throws {
        for (side, expected) in [
            (
                #"{"entityMappings": {"NoteToNotes": {"cdmigrate.intendedLosses": "title"}}}"#,
                "entity mapping 'NoteToNotes' is not in the mapping model"
            ),
            (
                #"{"entityMappings": {"NoteToNote": {"cdmigrate.intendedLoss": "title"}}}"#,
                "'cdmigrate.intendedLoss' is not a key of the side file"
            ),
            (
                #"{"entityMappings": {"NoteToNote": {"cdmigrate.intendedLosses": 3}}}"#,
                "must be text listing source property names"
            ),
            (#"{"mappings": {}}"#, "needs an 'entityMappings' object"),
            (
                #"{"entityMappings": {"NoteToNote": {"cdmigrate.intendedLosses": "colour"}}}"#,
                "names 'colour', which source entity 'Note' does not have"
            ),
        ] {
            let path = try mappingModel(side: side)
            XCTAssertThrowsError(
                try MappingModel(
                    contentsOf:
                        path, sourceModel: try UnCloudNotes.model(version: 2),
                    destinationModel: try UnCloudNotes.model(version: 3))
            ) { error in
                let e = error as? MigrationError
                XCTAssertEqual(e?.code, .invalidMapping)
                let all = ([e?.message ?? ""] + (e?.underlying.map { $0.message } ?? [])).joined(separator: "\n")
                XCTAssertTrue(all.contains(expected), all)
                if !expected.contains("colour") { XCTAssertTrue(all.contains(".cdmigrate.json"), all) }
            }
        }
    }
}
