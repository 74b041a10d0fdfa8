import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// Several migrations at once in one process, each with its own manager: from one shared source
/// to separate destinations, and from separate sources. Run under ThreadSanitizer by
/// scripts/test.sh (the classes whose names start with "Concurrent").
final class ConcurrentMigrationTests: XCTestCase {
    func testMigrationsOnThreadsFromOneSourceGiveIdenticalResults() throws {
        let scratch = ScratchDirectory()
        let source = scratch.file("notas.sqlite")
        try NotasCategorias.generateSource(at: source, count: 300)
        let before = fileBytes(source)
        let threads = 4
        var errors = [String?](repeating: nil, count: threads)
        var rows = [[String]](repeating: [], count: threads)
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: threads) { i in
            let destination = scratch.file("notas-v3-\(i).sqlite")
            do {
                _ = try NotasCategorias.manager().migrateStore(from: source, to: destination)
                let result = try Self.dump(destination)
                lock.lock()
                rows[i] = result
                lock.unlock()
            } catch {
                lock.lock()
                errors[i] = "\(error)"
                lock.unlock()
            }
        }
        XCTAssertEqual(errors.compactMap { $0 }, [])
        XCTAssertFalse(rows[0].isEmpty)
        for i in 1..<threads { XCTAssertEqual(rows[i], rows[0], "thread \(i)") }
        XCTAssertEqual(fileBytes(source), before, "the shared source is untouched")
    }

    func testMigrationsOnThreadsFromSeparateSources() throws {
        let scratch = ScratchDirectory()
        let threads = 4
        for i in 0..<threads {
            try NotasCategorias.generateSource(at: scratch.file("notas-\(i).sqlite"), count: 200, seed: UInt64(i + 1))
        }
        var failures: [String] = []
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: threads) { i in
            do {
                let report = try NotasCategorias.manager().migrateStore(
                    from: scratch.file("notas-\(i).sqlite"), to: scratch.file("out-\(i).sqlite"))
                if report.destinationCounts.first(where: { $0.entityName == "Nota" })?.count != 200 {
                    lock.lock()
                    failures.append("thread \(i): \(report.destinationCounts)")
                    lock.unlock()
                }
            } catch {
                lock.lock()
                failures.append("thread \(i): \(error)")
                lock.unlock()
            }
        }
        XCTAssertEqual(failures, [])
    }

    /// Every row of every Z table, as text, in primary-key order.
    static func dump(_ path: String) throws -> [String] {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        var lines: [String] = []
        let tables = try database.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE') ORDER BY name"
        )
        for table in tables.compactMap({ row -> String? in
            if case .text(let name)? = row.first { return name }
            return nil
        }) {
            for row in try database.rows("SELECT * FROM \(SQLiteDatabase.quote(table)) ORDER BY 1") {
                lines.append(table + ": " + row.map { "\($0)" }.joined(separator: "|"))
            }
        }
        return lines
    }
}

/// `cancel()` from another thread stops a running migration, which removes what it wrote.
final class ConcurrentCancellationTests: XCTestCase {
    func testCancelFromAnotherThreadStopsTheMigration() throws {
        let scratch = ScratchDirectory()
        let source = scratch.file("notas.sqlite")
        let destination = scratch.file("out.sqlite")
        try NotasCategorias.generateSource(at: source, count: 3_000)
        let manager = try NotasCategorias.manager()
        manager.progressInterval = 1
        let started = DispatchSemaphore(value: 0)
        var signalled = false
        manager.progressHandler = { progress in
            if !signalled && progress.processed > 0 {
                signalled = true
                started.signal()
                usleep(20_000)
            }
            return true
        }
        DispatchQueue.global().async {
            started.wait()
            manager.cancel()
        }
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: destination)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationCancelled, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
    }
}
