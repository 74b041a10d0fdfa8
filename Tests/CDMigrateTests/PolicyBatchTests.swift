import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// A policy's batch hook (`createDestinationInstances(forSourceBatch:in:manager:)`): the same
/// destination as the single-row policy, across batch boundaries, with and without SQL, and its
/// errors.
final class PolicyBatchTests: XCTestCase {
    /// Reference migration 1 written against the batch hook: the default for the whole batch,
    /// one Categoria per new name, the notes related to their categories in one call.
    final class BatchCategorias: EntityMigrationPolicy {
        var categorias: [String: Int64] = [:]
        var batchSizes: [Int] = []
        var failAtBatch: Int?
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            batchSizes.append(batch.count)
            if let fail = failAtBatch, batchSizes.count == fail {
                throw MigrationError(.entityMigrationPolicy, "batch \(fail) refused")
            }
            let notas = try batch.applyDefault()
            XCTAssertEqual(notas.count, batch.count)
            let names = try batch.values(ofAttribute: "categoria")
            var newNames: [String] = []
            for case .string(let name) in names
            where !name.isEmpty && categorias[name] == nil && !newNames.contains(name) { newNames.append(name) }
            let made = try manager.createDestinationInstances(
                entityName: "Categoria", values: newNames.map { ["nombre": .string($0)] })
            for (name, key) in zip(newNames, made) { categorias[name] = key }
            var owners: [Int64] = []
            var targets: [Int64] = []
            for (nota, name) in zip(notas, names) {
                guard case .string(let n) = name, let categoria = categorias[n] else { continue }
                owners.append(nota)
                targets.append(categoria)
            }
            try manager.relate(entityName: "Nota", relationshipName: "categorias", owners: owners, targets: targets)
        }
    }

    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    /// (contenido, fecha, etiquetas, category names) of every Nota, sorted.
    func notas(_ path: String) throws -> [String] {
        try StoreAccess.readStore(at: path, model: try NotasCategorias.destinationModel()) { store in
            try StoreAccess.all("Nota", in: store).map {
                "\(try $0.string("contenido") ?? "")|\(try $0.value(forKey: "fecha"))|\(try $0.value(forKey: "etiquetas"))|"
                    + (try $0.objects("categorias").map { try $0.string("nombre") ?? "" }.sorted().joined(
                        separator: ","))
            }.sorted()
        }
    }

    func migrate(_ source: String, _ name: String, policy: BatchCategorias, batchSize: Int, pushDownSQL: Bool = true)
        throws -> String
    {
        let destination = scratch.file(name)
        let manager = try MigrationManager(
            sourceModel: try NotasCategorias.sourceModel(), destinationModel: try NotasCategorias.destinationModel(),
            mappingModels: [try NotasCategorias.mapping()])
        manager.batchSize = batchSize
        manager.pushDownSQL = pushDownSQL
        manager.registerPolicy(named: "CrearCategoriasMigrationPolicy") { policy }
        _ = try manager.migrateStore(from: source, to: destination)
        return destination
    }

    func testBatchHookGivesTheSingleRowPolicysDestinationAcrossBatchBoundaries() throws {
        let source = scratch.file("Notas-v2.sqlite")
        try NotasCategorias.generateSource(at: source, count: 600)
        let expected = scratch.file("expected.sqlite")
        _ = try NotasCategorias.manager().migrateStore(from: source, to: expected)
        let policy = BatchCategorias()
        let withSQL = try migrate(source, "sql.sqlite", policy: policy, batchSize: 64)
        XCTAssertEqual(policy.batchSizes, Array(repeating: 64, count: 9) + [24])
        XCTAssertEqual(try notas(withSQL), try notas(expected))
        // One batch of 600: its pairs are written a few hundred per statement.
        let rowByRow = try migrate(
            source, "engine.sqlite", policy: BatchCategorias(), batchSize: 1_000, pushDownSQL: false)
        XCTAssertEqual(try notas(rowByRow), try notas(expected))
        let categorias = try StoreAccess.readStore(at: withSQL, model: try NotasCategorias.destinationModel()) {
            try StoreAccess.all("Categoria", in: $0).count
        }
        XCTAssertEqual(categorias, policy.categorias.count)
    }

    func testBatchesWithGapsInTheirKeysGiveTheSameDestination() throws {
        let source = scratch.file("Notas-v2.sqlite")
        try NotasCategorias.generateSource(at: source, count: 200)
        let store = try PersistentStore.open(at: source, model: try NotasCategorias.sourceModel(), readOnly: false)
        try store.database.exec("DELETE FROM ZNOTA WHERE Z_PK % 7 = 0")
        store.close()
        let expected = scratch.file("expected.sqlite")
        _ = try NotasCategorias.manager().migrateStore(from: source, to: expected)
        let policy = BatchCategorias()
        let destination = try migrate(source, "gaps.sqlite", policy: policy, batchSize: 50)
        XCTAssertEqual(policy.batchSizes, [50, 50, 50, 22])
        XCTAssertEqual(try notas(destination), try notas(expected))
        XCTAssertEqual(try notas(destination).count, 172)
    }

    /// Collects the keys `applyDefault` gives, numbered or not; with `ownFirst`, makes a Nota of its
    /// own before the first batch's default.
    final class Numbering: EntityMigrationPolicy {
        var numbered = false
        var ownFirst = false
        var keys: [Int64] = []
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            if ownFirst, keys.isEmpty {
                keys += try manager.createDestinationInstances(
                    entityName: "Nota", values: [["contenido": .string("propia"), "fecha": .double(0)]])
            }
            keys += try batch.applyDefault(numbered: numbered)
        }
    }

    func numberingRun(_ source: String, _ name: String, numbered: Bool, ownFirst: Bool = false) throws -> (
        keys: [Int64], notas: [String]
    ) {
        let policy = Numbering()
        policy.numbered = numbered
        policy.ownFirst = ownFirst
        let destination = scratch.file(name)
        let manager = try MigrationManager(
            sourceModel: try NotasCategorias.sourceModel(), destinationModel: try NotasCategorias.destinationModel(),
            mappingModels: [try NotasCategorias.mapping()])
        manager.batchSize = 50
        manager.registerPolicy(named: "CrearCategoriasMigrationPolicy") { policy }
        _ = try manager.migrateStore(from: source, to: destination)
        let stored = try StoreAccess.readStore(at: destination, model: try NotasCategorias.destinationModel()) {
            store in
            try StoreAccess.all("Nota", in: store).map {
                "\($0.objectID.primaryKey)|\(try $0.string("contenido") ?? "")"
            }.sorted()
        }
        return (policy.keys, stored)
    }

    /// The numbered default gives the keys notes made one by one in row order would have (1, 2,
    /// 3… over the gaps of the source keys); the plain one keeps the source keys of a mapping that
    /// takes its entity whole into an empty table, but only when nothing was made there before it.
    func testNumberedDefaultGivesTheKeysOfInstancesMadeOneByOne() throws {
        let source = scratch.file("Notas-v2.sqlite")
        try NotasCategorias.generateSource(at: source, count: 200)
        let store = try PersistentStore.open(at: source, model: try NotasCategorias.sourceModel(), readOnly: false)
        try store.database.exec("DELETE FROM ZNOTA WHERE Z_PK % 7 = 0")
        store.close()
        let sourceKeys = (1...200).map { Int64($0) }.filter { $0 % 7 != 0 }
        let numbered = try numberingRun(source, "numbered.sqlite", numbered: true)
        XCTAssertEqual(numbered.keys, (1...172).map { Int64($0) })
        let kept = try numberingRun(source, "kept.sqlite", numbered: false)
        XCTAssertEqual(kept.keys, sourceKeys)
        XCTAssertEqual(
            Set(numbered.notas.map { $0.split(separator: "|", maxSplits: 1)[1] }),
            Set(kept.notas.map { $0.split(separator: "|", maxSplits: 1)[1] }))
        // A Nota made before the first default: the default numbers after it, keeping no source key.
        let afterOwn = try numberingRun(source, "own.sqlite", numbered: false, ownFirst: true)
        XCTAssertEqual(afterOwn.keys, (1...173).map { Int64($0) })
        XCTAssertEqual(afterOwn.notas.count, 173)
    }

    /// Looks the batch's notes up through the associations in every batch after the first (which
    /// writes out the implied ones), and refuses a second `applyDefault`.
    final class LookingUp: EntityMigrationPolicy {
        var found: [Int] = []
        var secondDefault = ""
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            let made = try batch.applyDefault()
            do { try batch.applyDefault() } catch { secondDefault = (error as? MigrationError)?.message ?? "\(error)" }
            let sources = try batch.sourceInstances()
            let destinations = try manager.destinationInstances(
                forEntityMappingName: mapping.name, sourceInstances: [sources[0], sources[sources.count - 1]])
            XCTAssertEqual(destinations.map { $0.objectID.primaryKey }, [made[0], made[made.count - 1]])
            found.append(destinations.count)
        }
    }

    func testAssociationsOfBatchesAreFoundDuringAndAfterStageOne() throws {
        let source = scratch.file("Notas-v2.sqlite")
        try NotasCategorias.generateSource(at: source, count: 90)
        let manager = try MigrationManager(
            sourceModel: try NotasCategorias.sourceModel(), destinationModel: try NotasCategorias.destinationModel(),
            mappingModels: [try NotasCategorias.mapping()])
        manager.batchSize = 40
        let policy = LookingUp()
        manager.registerPolicy(named: "CrearCategoriasMigrationPolicy") { policy }
        let report = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        XCTAssertEqual(policy.found, [2, 2, 2])
        XCTAssertTrue(policy.secondDefault.contains("already ran"), policy.secondDefault)
        XCTAssertEqual(report.mappings.first?.associations, 90)
    }

    func testAnEmptySourceCallsNoBatch() throws {
        let source = scratch.file("empty.sqlite")
        try NotasCategorias.generateSource(at: source, count: 0)
        let policy = BatchCategorias()
        let destination = try migrate(source, "out.sqlite", policy: policy, batchSize: 10)
        XCTAssertEqual(policy.batchSizes, [])
        XCTAssertEqual(try notas(destination), [])
    }

    func testAnErrorInTheBatchHookStopsTheMigrationWithItsMessage() throws {
        let source = scratch.file("Notas-v2.sqlite")
        try NotasCategorias.generateSource(at: source, count: 30)
        let policy = BatchCategorias()
        policy.failAtBatch = 2
        XCTAssertThrowsError(try migrate(source, "out.sqlite", policy: policy, batchSize: 10)) { error in
            XCTAssertTrue("\(error)".contains("batch 2 refused"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("out.sqlite")))
    }

    /// A policy that checks the bulk calls' refusals from inside a batch.
    final class Refusals: EntityMigrationPolicy {
        var messages: [String] = []
        var kept: SourceBatch?
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            func refused(_ body: () throws -> Void) {
                do {
                    try body()
                    messages.append("accepted")
                } catch { messages.append((error as? MigrationError)?.message ?? "\(error)") }
            }
            refused { _ = try batch.values(ofAttribute: "nada") }
            refused { _ = try manager.createDestinationInstances(entityName: "Nadie", values: [[:]]) }
            refused {
                _ = try manager.createDestinationInstances(entityName: "Categoria", values: [["color": .string("x")]])
            }
            refused { try manager.relate(entityName: "Nota", relationshipName: "amigos", owners: [1], targets: [1]) }
            refused {
                try manager.relate(entityName: "Nota", relationshipName: "categorias", owners: [1, 2], targets: [1])
            }
            let notas = try batch.applyDefault()
            refused {
                try manager.relate(
                    entityName: "Nota", relationshipName: "categorias", owners: [notas[0]], targets: [999])
            }
            refused {
                try batch.associate(destinationEntityName: "Nota", sourceKeys: [123_456], destinationKeys: [notas[0]])
            }
            kept = batch
        }
    }

    func testBulkCallsRefuseUnknownNamesAndKeysWithMessages() throws {
        let source = scratch.file("Notas-v2.sqlite")
        try NotasCategorias.generateSource(at: source, count: 5)
        let manager = try MigrationManager(
            sourceModel: try NotasCategorias.sourceModel(), destinationModel: try NotasCategorias.destinationModel(),
            mappingModels: [try NotasCategorias.mapping()])
        let policy = Refusals()
        manager.registerPolicy(named: "CrearCategoriasMigrationPolicy") { policy }
        _ = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        XCTAssertEqual(policy.messages.count, 7)
        XCTAssertFalse(policy.messages.contains("accepted"), "\(policy.messages)")
        XCTAssertTrue(policy.messages[0].contains("no attribute 'nada'"), policy.messages[0])
        XCTAssertTrue(policy.messages[1].contains("'Nadie'"), policy.messages[1])
        XCTAssertTrue(policy.messages[2].contains("'color'"), policy.messages[2])
        XCTAssertTrue(policy.messages[3].contains("'amigos'"), policy.messages[3])
        XCTAssertTrue(policy.messages[4].contains("2 owners but 1 targets"), policy.messages[4])
        XCTAssertTrue(policy.messages[5].contains("primary key 999"), policy.messages[5])
        XCTAssertTrue(policy.messages[6].contains("123456"), policy.messages[6])
        XCTAssertThrowsError(try policy.kept?.applyDefault()) {
            XCTAssertTrue("\($0)".contains("no longer valid"), "\($0)")
        }
    }
}
