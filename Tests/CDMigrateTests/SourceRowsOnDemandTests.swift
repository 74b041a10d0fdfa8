import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// Source instances that read their values from the enumeration's row when asked for
/// (`LiveSourceRow`, the row-by-row stage 1): the same values as instances read whole, whether
/// read during their row, kept past it (a policy's dictionary, `run.currentSource`), read after
/// later rows, never read at all, transformable, or tested by a predicate evaluated per row.
final class SourceRowsOnDemandTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    static let itemsModel = #"""
        {"name": "Items", "entities": [
         {"name": "Item", "attributes": [{"name": "name", "type": "string", "optional": true},
          {"name": "rank", "type": "integer64", "optional": true},
          {"name": "payload", "type": "transformable", "optional": true},
          {"name": "photo", "type": "binary", "optional": true, "allowsExternalBinaryDataStorage": true}]},
         {"name": "Special", "parent": "Item", "attributes": [{"name": "extra", "type": "string", "optional": true}]}]}
        """#

    /// A store of `count` items (every fifth a Special), some values nil, a transformable archive
    /// and external-size binary data on some.
    func makeItems(_ count: Int) throws -> (String, ManagedObjectModel) {
        let model = try ManagedObjectModel(json: Self.itemsModel)
        let path = scratch.file("items.sqlite")
        try makeStore(path, model) { store in
            for i in 0..<count {
                var values: [String: Value] = ["rank": i % 3 == 0 ? .null : .integer(Int64(i))]
                if i % 4 != 1 { values["name"] = .string("item \(i) «ñ»") }
                if i % 2 == 0 {
                    values["payload"] = .binary(
                        try TransformableValue.archive(
                            .collection([.string("p\(i)"), .integer(Int64(i))]), what: "test"))
                }
                if i % 7 == 0 { values["photo"] = .binary([UInt8](repeating: UInt8(i % 256), count: 200_000)) }
                if i % 5 == 0 { values["extra"] = .string("extra \(i)") }
                _ = try insert(store, i % 5 == 0 ? "Special" : "Item", values)
            }
        }
        return (path, model)
    }

    /// Every attribute of an instance as `value(forKey:)` and `storedValue(for:)` give it.
    func describe(_ object: ManagedObject) throws -> [String] {
        try object.entity.attributes.flatMap { attribute in
            [
                "\(attribute.name)=\(try object.value(forKey: attribute.name))",
                "\(try object.storedValue(for: attribute))",
            ]
        } + [object.objectID.uriRepresentation]
    }

    func testInstancesReadOnDemandGiveTheValuesOfInstancesReadWhole() throws {
        let (path, model) = try makeItems(40)
        let store = try PersistentStore.open(at: path, model: model, readOnly: true)
        defer { store.close() }
        var request = FetchRequest(entityName: "Item")
        request.includesSubentities = true
        let whole = try store.fetch(request).map(describe)
        var onDemand: [[String]] = []
        var kept: [ManagedObject] = []
        var untouched: [ManagedObject] = []
        var previous: ManagedObject?
        var index = 0
        try store.enumerate(request, readingOnDemand: true) { object in
            XCTAssertTrue(object.isFault, "nothing read up front")
            // One attribute now, the rest later: each read from the row.
            _ = try object.value(forKey: "rank")
            onDemand.append(try describe(object))
            // The instance before: it was kept past its row, so it took its values with it.
            if let previous = previous {
                XCTAssertEqual(try describe(previous), whole[index - 1], "read after later rows")
            }
            previous = object
            if index % 3 == 0 { kept.append(object) }
            // Kept without a single value read during its row.
            if index % 3 == 1 { untouched.append(object) }
            index += 1
            return true
        }
        XCTAssertEqual(onDemand, whole)
        store.close()
        // Every kept instance answers its own values, with the store closed.
        for object in kept + untouched {
            XCTAssertFalse(object.isFault)
            XCTAssertEqual(try describe(object), whole[Int(object.objectID.primaryKey) - 1])
        }
        XCTAssertEqual(kept.count + untouched.count, 27)
    }

    func testAnInstanceNotKeptIsNotReadWholeAndItsRowsValuesStayItsOwn() throws {
        let (path, model) = try makeItems(12)
        let store = try PersistentStore.open(at: path, model: model, readOnly: true)
        defer { store.close() }
        var request = FetchRequest(entityName: "Item")
        request.includesSubentities = true
        let names = try store.fetch(request).map { try $0.value(forKey: "name") }
        var weakOnes: [() -> ManagedObject?] = []
        var seen: [Value] = []
        try store.enumerate(request, readingOnDemand: true) { object in
            seen.append(try object.value(forKey: "name"))
            weak var gone = object
            weakOnes.append { gone }
            return true
        }
        XCTAssertEqual(seen, names)
        XCTAssertTrue(weakOnes.allSatisfy { $0() == nil }, "instances nobody kept are let go")
    }

    /// The instance of a row nobody kept serves the next row of its entity: it answers that row's
    /// values and key, whatever the last row did with it (read whole, read in part); an instance
    /// kept, or of another entity, is not reused.
    func testAnInstanceNobodyKeptServesTheNextRowOfItsEntity() throws {
        let (path, model) = try makeItems(30)
        let store = try PersistentStore.open(at: path, model: model, readOnly: true)
        defer { store.close() }
        var request = FetchRequest(entityName: "Item")
        request.includesSubentities = true
        let whole = try store.fetch(request).map(describe)
        var onDemand: [[String]] = []
        var kept: [ManagedObject] = []
        var last: (id: ObjectIdentifier, entity: String, kept: Bool)?
        var reused = 0
        try store.enumerate(request, readingOnDemand: true) { object in
            let row = onDemand.count
            if let last = last {
                let same = last.id == ObjectIdentifier(object)
                if last.kept || last.entity != object.entity.name {
                    XCTAssertFalse(same, "row \(row): an instance kept, or of another entity, is not reused")
                } else {
                    XCTAssertTrue(same, "row \(row): the last row's instance, which nobody kept, is reused")
                }
                if same { reused += 1 }
            }
            XCTAssertTrue(object.isFault)
            switch row % 3 {
            case 0: onDemand.append(try describe(object))  // read whole
            case 1:
                _ = try object.value(forKey: "rank")  // read in part, then whole
                onDemand.append(try describe(object))
            default:
                try object.fireFault()
                onDemand.append(try describe(object))
            }
            let keep = row % 4 == 3
            if keep { kept.append(object) }
            last = (ObjectIdentifier(object), object.entity.name, keep)
            return true
        }
        XCTAssertEqual(onDemand, whole)
        XCTAssertGreaterThan(reused, 10)
        for object in kept { XCTAssertEqual(try describe(object), whole[Int(object.objectID.primaryKey) - 1]) }
    }

    func testAPredicateEvaluatedPerRowReadsTheRowsOwnValues() throws {
        let (path, model) = try makeItems(30)
        let store = try PersistentStore.open(at: path, model: model, readOnly: true)
        defer { store.close() }
        var request = FetchRequest(entityName: "Item")
        request.includesSubentities = true
        request.filter = { object in
            guard case .string(let name) = try object.value(forKey: "name") else { return false }
            let rank = try object.value(forKey: "rank")
            return name.hasSuffix("«ñ»") && rank != .null
        }
        let whole = try store.fetch(request).map(describe)
        var onDemand: [[String]] = []
        try store.enumerate(request, readingOnDemand: true) { object in
            onDemand.append(try describe(object))
            return true
        }
        XCTAssertEqual(onDemand, whole)
        XCTAssertEqual(whole.count, 14)
    }

    func testAnErrorInTheBodyLeavesAKeptInstanceAFaultThatReadsItsRow() throws {
        let (path, model) = try makeItems(5)
        let store = try PersistentStore.open(at: path, model: model, readOnly: true)
        defer { store.close() }
        var kept: ManagedObject?
        XCTAssertThrowsError(
            try store.enumerate(FetchRequest(entityName: "Item"), readingOnDemand: true) { object in
                kept = object
                throw MigrationError(.entityMigrationPolicy, "stop")
            })
        let object = try XCTUnwrap(kept)
        XCTAssertTrue(object.isFault)
        XCTAssertEqual(try object.value(forKey: "name"), .string("item 0 «ñ»"))
        XCTAssertFalse(object.isFault)
    }

    func testValuesCountedAsTheRowsPassAreWhatACountOfTheTableGives() throws {
        let (path, model) = try makeItems(33)
        let store = try PersistentStore.open(at: path, model: model, readOnly: true)
        defer { store.close() }
        var request = FetchRequest(entityName: "Item")
        request.includesSubentities = true
        let names = ["name", "rank", "payload", "photo"]
        let counts = NonNilValueCounts(names: names)
        var rows = 0
        try store.enumerate(request, readingOnDemand: true, counting: counts) { object in
            // What the body reads does not change what is counted.
            if rows % 2 == 0 { _ = try object.value(forKey: "name") }
            rows += 1
            return true
        }
        let sql = try store.database.rows(
            "SELECT COUNT(ZNAME), COUNT(ZRANK), COUNT(ZPAYLOAD), COUNT(ZPHOTO) FROM ZITEM")
        XCTAssertEqual(counts.counts.map { Int64($0) }, (0..<4).map { sql.first?.element(at: $0)?.integer ?? -1 })
        XCTAssertEqual(rows, 33)
        XCTAssertEqual(counts.counts, [25, 22, 17, 5])
        // The Special rows alone: only their own rows are counted.
        let specials = NonNilValueCounts(names: ["extra", "name"])
        try store.enumerate(FetchRequest(entityName: "Special"), readingOnDemand: true, counting: specials) { _ in true
        }
        XCTAssertEqual(specials.counts, [7, 5])
    }

    /// A row-by-row policy keeping some of its source instances, reading them in later rows and
    /// after the migration; and `run.currentSource` read by a value expression.
    final class KeepingPolicy: EntityMigrationPolicy {
        let inner = CrearCategoriasMigrationPolicy()
        var kept: [Int64: ManagedObject] = [:]
        var readLater: [Int64: String] = [:]
        var last: ManagedObject?
        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            if let last = last { readLater[last.objectID.primaryKey] = "\(try last.value(forKey: "contenido"))" }
            last = sInstance
            if sInstance.objectID.primaryKey % 4 == 0 { kept[sInstance.objectID.primaryKey] = sInstance }
            try inner.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
    }

    func testAPolicyKeepingSourceInstancesSeesTheirValuesAfterTheirRowsAndAfterTheRun() throws {
        let source = scratch.file("Notas-v2.sqlite")
        try NotasCategorias.generateSource(at: source, count: 120)
        let expected = scratch.file("expected.sqlite")
        let plain = try NotasCategorias.manager().migrateStore(from: source, to: expected)
        let manager = try MigrationManager(
            sourceModel: try NotasCategorias.sourceModel(), destinationModel: try NotasCategorias.destinationModel(),
            mappingModels: [try NotasCategorias.mapping()])
        let policy = KeepingPolicy()
        manager.registerPolicy(named: CrearCategoriasMigrationPolicy.name) { policy }
        manager.batchSize = 16
        let destination = scratch.file("kept.sqlite")
        let report = try manager.migrateStore(from: source, to: destination)
        XCTAssertEqual(report.losses, plain.losses)
        let rows = try StoreAccess.readStore(at: source, model: try NotasCategorias.sourceModel()) { store in
            try store.fetch(FetchRequest(entityName: "Nota")).map { nota in
                (nota.objectID.primaryKey, try nota.entity.attributes.map { "\(try nota.value(forKey: $0.name))" })
            }
        }
        let byKey = Dictionary(uniqueKeysWithValues: rows)
        XCTAssertEqual(policy.kept.count, 30)
        for (key, object) in policy.kept {
            XCTAssertEqual(try object.entity.attributes.map { "\(try object.value(forKey: $0.name))" }, byKey[key])
        }
        XCTAssertEqual(policy.readLater.count, 119)
        for (key, contenido) in policy.readLater { XCTAssertEqual(contenido, byKey[key]?.first) }
        // The destination is the plain policy's.
        func notas(_ path: String) throws -> [String] {
            try StoreAccess.readStore(at: path, model: try NotasCategorias.destinationModel()) { store in
                try StoreAccess.all("Nota", in: store).map {
                    "\(try $0.value(forKey: "contenido"))|\(try $0.value(forKey: "etiquetas"))|"
                        + (try $0.objects("categorias").map { try $0.string("nombre") ?? "" }.joined())
                }.sorted()
            }
        }
        XCTAssertEqual(try notas(destination), try notas(expected))
    }
}
