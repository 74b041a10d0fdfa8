import Foundation
import XCTest

@testable import CDMigrate

/// A store of `Tests/Fixtures/external-data/photos-v1.json` holding its binary and transformable
/// values as Core Data writes them with external storage allowed: the column is `0x01` + the
/// bytes, or `0x02` + the upper-case UUID of a file + NUL, the file in
/// `.photos_SUPPORT/_EXTERNAL_DATA/` beside the store (docs/store-layout.md cites the sources).
/// The store's tables are cdmigrate's; the columns are set by raw SQL, never by the engine's
/// encoder. The committed `Tests/Fixtures/external-data/photos.sqlite` was written by `write(at:)`.
enum ExternalDataFixture {
    static let imageFileUUID = "6F1C2A9E-3B7D-4E21-9A0C-5D8E7F6A1B2C"
    static let infoFileUUID = "A8E3C1D5-92B4-4F67-8E1A-3C5D7B9F0E24"
    static let smallFileUUID = "3E5A7C9B-1D2F-4A6B-8C0E-9F1A2B3C4D5E"
    static let missingFileUUID = "0D4B8E2F-71A3-4C5E-8B9D-2E6F0A1C3D5E"

    /// Deterministic bytes (not all the same, so that a shifted or truncated copy differs).
    static func pattern(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 8) &* 7) ^ seed }
    }
    static let inlineImage = pattern(1_000, seed: 1)
    static let externalImage = pattern(200_000, seed: 2)  // above Core Data's 128 KiB
    static let smallFileImage = pattern(5_000, seed: 5)  // in a file although small (an older Core Data's choice)
    static let inlineInfo = pattern(300, seed: 3)
    static let externalInfo = pattern(150_000, seed: 4)

    /// Rows: name → (image column, info column); files: UUID → bytes.
    static var columns: [(name: String, image: [UInt8]?, info: [UInt8]?)] {
        [
            ("inline", [1] + inlineImage, [1] + inlineInfo),
            ("external", reference(imageFileUUID), reference(infoFileUUID)),
            ("small-file", reference(smallFileUUID), nil),
            ("missing", reference(missingFileUUID), nil),
            ("none", nil, nil),
        ]
    }
    static var files: [(uuid: String, bytes: [UInt8])] {
        [(imageFileUUID, externalImage), (infoFileUUID, externalInfo), (smallFileUUID, smallFileImage)]
    }

    static func reference(_ uuid: String) -> [UInt8] { [2] + Array(uuid.utf8) + [0] }

    static var modelsFolder: String { TestPaths.fixtures + "/external-data" }
    static func model(_ version: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: modelsFolder + "/photos-\(version).json")
    }

    /// Writes the store at `path` (which must not exist) and its external data folder.
    static func write(at path: String) throws {
        let model = try model("v1")
        try makeStore(path, model) { store in
            for row in columns { try insert(store, "Photo", ["name": .string(row.name)]) }
        }
        let database = try SQLiteDatabase(path: path, mode: .readWrite)
        defer { database.close() }
        for row in columns {
            try database.run(
                "UPDATE ZPHOTO SET ZIMAGE = ?, ZINFO = ? WHERE ZNAME = ?",
                [row.image.map { .binary($0) } ?? .null, row.info.map { .binary($0) } ?? .null, .string(row.name)])
        }
        let folder = ExternalBinaryData.folder(forStore: path)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for file in files { try Data(file.bytes).write(to: URL(fileURLWithPath: folder + "/" + file.uuid)) }
    }

    /// A writable copy of the committed fixture store with its external data folder, in its own
    /// folder under `directory`; returns the store's path.
    static func copy(into directory: String, name: String = "photos.sqlite") throws -> String {
        let folder = directory + "/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = folder + "/" + name
        try FileManager.default.copyItem(atPath: modelsFolder + "/photos.sqlite", toPath: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store)
        let target = ExternalBinaryData.folder(forStore: store)
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let committed = ExternalBinaryData.folder(forStore: modelsFolder + "/photos.sqlite")
        for entry in try FileManager.default.contentsOfDirectory(atPath: committed) {
            try FileManager.default.copyItem(atPath: committed + "/" + entry, toPath: target + "/" + entry)
        }
        return store
    }

    /// The raw column values of a store's Photo rows, by name.
    static func rawColumns(_ path: String, _ column: String = "ZIMAGE") throws -> [String: [UInt8]?] {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        var result: [String: [UInt8]?] = [:]
        for row in try database.rows("SELECT ZNAME, \(column) FROM ZPHOTO") {
            guard case .text(let name)? = row.first else { continue }
            if case .blob(let bytes) = row[1] { result[name] = bytes } else { result[name] = .some(nil) }
        }
        return result
    }

    /// Every file under `folder`, recursively, with its bytes: a folder's whole state.
    static func snapshot(_ folder: String) -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let entry = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = folder + "/" + entry
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            result[entry] = isDirectory.boolValue ? Data() : (FileManager.default.contents(atPath: path) ?? Data())
        }
        return result
    }
}
