import Foundation
import XCTest

/// `scripts/folder-dependencies.py`: the engine's folders use only folders below them
/// (docs/architecture.md), and the check refuses a use against that direction.
final class FolderDependencyTests: XCTestCase {
    static let script = TestPaths.repository + "/scripts/folder-dependencies.py"

    func check(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try runProcess("/usr/bin/env", ["python3", Self.script] + arguments)
    }

    func testEngineFoldersUseOnlyFoldersBelowThem() throws {
        let result = try check([])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("Model -> Core\n"), result.out)
        XCTAssertTrue(
            result.out.contains("Core -> Store\n"), "the one exception, Value.object(ManagedObject): \(result.out)")
    }

    func testCheckRefusesAFolderUsingOneAboveIt() throws {
        let scratch = ScratchDirectory()
        let files = [
            "Core/Value.swift": "public enum Value { case object(ManagedObject) }\n",
            "Model/Entity.swift": "struct Entity { let store: PersistentStore }\n",
            "Store/PersistentStore.swift":
                "final class PersistentStore { let entity: Entity? = nil }\nfinal class ManagedObject {}\n",
        ]
        for (path, text) in files {
            try FileManager.default.createDirectory(
                atPath: scratch.file(String(path.split(separator: "/")[0])), withIntermediateDirectories: true)
            try text.write(toFile: scratch.file(path), atomically: true, encoding: .utf8)
        }
        let result = try check(["--root", scratch.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.err.contains("Model -> Store: PersistentStore (Entity.swift)"), result.err)
        XCTAssertFalse(
            result.err.contains("Core -> Store"), "Value.object(ManagedObject) is the allowed exception: \(result.err)")
        try FileManager.default.removeItem(atPath: scratch.file("Model/Entity.swift"))
        XCTAssertEqual(try check(["--root", scratch.path]).status, 0)
    }

    func testCheckRefusesAFolderOutsideTheOrder() throws {
        let scratch = ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.file("Helpers"), withIntermediateDirectories: true)
        try "struct Helper {}\n".write(toFile: scratch.file("Helpers/Helper.swift"), atomically: true, encoding: .utf8)
        let result = try check(["--root", scratch.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.err.contains("Helpers/ is not in ORDER"), result.err)
    }
}
