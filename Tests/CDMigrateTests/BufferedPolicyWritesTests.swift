import XCTest

@testable import CDMigrate

/// What a single-row policy writes one call at a time — join rows of plain many-to-manys and
/// associations — is buffered and written a chunk per multi-row INSERT; every read in between
/// sees it, and the written rows are the ones row-by-row INSERTs would have written, in order.
final class BufferedPolicyWritesTests: XCTestCase {
    static let notas = """
        {"name": "Notas", "entities": [
          {"name": "Nota", "attributes": [{"name": "contenido", "type": "string"}],
           "relationships": [{"name": "categorias", "destination": "Categoria", "inverse": "notas", "toMany": true}]},
          {"name": "Categoria", "attributes": [{"name": "nombre", "type": "string"}],
           "relationships": [{"name": "notas", "destination": "Nota", "inverse": "categorias", "toMany": true}]}
        ]}
        """

    var scratch: ScratchDirectory!
    var model: ManagedObjectModel!
    var store: PersistentStore!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        model = try ManagedObjectModel(json: Self.notas)
        store = try PersistentStore.create(at: scratch.file("n.sqlite"), model: model)
    }

    override func tearDown() {
        // XCTest keeps every test case object to the end of the run: let go of the store here,
        // or it (and what refers to it weakly) would outlive the test.
        store?.close()
        store = nil
        model = nil
        scratch = nil
    }

    private func keys(_ value: Value) -> [Int64] {
        value.elements.compactMap { $0.object?.objectID.primaryKey }.sorted()
    }

    func testJoinRowsAddedPairByPairAreReadBackBeforeAndAfterTheyAreWritten() throws {
        let categorias = try XCTUnwrap(model.entity(named: "Nota")?.relationship(named: "categorias"))
        let made = try (0..<3).map { _ in try store.insertObject(entityName: "Categoria") }
        var expected: [[Int64]] = [[], [], []]
        // More pairs than one chunk, so that some are written and some still buffered when read.
        for i in 0..<(PendingJoinRows.chunk * 2 + 37) {
            let nota = try store.insertObject(entityName: "Nota")
            let categoria = made[i % 3]
            try nota.add([categoria], to: categorias)
            try nota.add([categoria], to: categorias)  // a pair added again is kept once
            expected[i % 3].append(nota.objectID.primaryKey)
            if i % 97 == 0 || i == PendingJoinRows.chunk {
                XCTAssertEqual(keys(try categoria.value(forKey: "notas")), expected[i % 3], "after note \(i)")
                XCTAssertEqual(keys(try nota.value(forKey: "categorias")), [categoria.objectID.primaryKey])
            }
        }
        try store.save()
        for (i, categoria) in made.enumerated() {
            XCTAssertEqual(keys(try categoria.value(forKey: "notas")), expected[i])
        }
        XCTAssertEqual(
            try store.database.scalar("SELECT COUNT(*) FROM Z_1NOTAS")?.integer,
            Int64(PendingJoinRows.chunk * 2 + 37))
    }

    /// Once a relationship's pairs are buffered, later adds skip the storage look-up but not the
    /// checks: an instance of another store is refused, as at the first add, and nothing is buffered.
    func testAddsAfterTheFirstBufferedPairAreCheckedAsTheFirst() throws {
        let categorias = try XCTUnwrap(model.entity(named: "Nota")?.relationship(named: "categorias"))
        let other = try PersistentStore.create(at: scratch.file("other.sqlite"), model: model)
        defer { other.close() }
        let nota = try store.insertObject(entityName: "Nota")
        let stranger = try other.insertObject(entityName: "Categoria")
        XCTAssertThrowsError(try nota.add([stranger], to: categorias)) { error in
            XCTAssertTrue("\(error)".contains("does not belong to the store"), "\(error)")
        }
        let own = try store.insertObject(entityName: "Categoria")
        try nota.add([own], to: categorias)
        XCTAssertThrowsError(try nota.add([stranger], to: categorias)) { error in
            XCTAssertTrue("\(error)".contains("does not belong to the store"), "\(error)")
        }
        XCTAssertThrowsError(
            try stranger.add(
                [nota], to: try XCTUnwrap(other.model.entity(named: "Categoria")?.relationship(named: "notas"))))
        try store.save()
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM Z_1NOTAS")?.integer, 1)
        XCTAssertEqual(keys(try nota.value(forKey: "categorias")), [own.objectID.primaryKey])
    }

    func testRemovingOrReplacingAfterABufferedAddSeesTheAdd() throws {
        let categorias = try XCTUnwrap(model.entity(named: "Nota")?.relationship(named: "categorias"))
        let nota = try store.insertObject(entityName: "Nota")
        let c1 = try store.insertObject(entityName: "Categoria")
        let c2 = try store.insertObject(entityName: "Categoria")
        try nota.add([c1, c2], to: categorias)
        try nota.remove([c1], from: categorias)
        XCTAssertEqual(keys(try nota.value(forKey: "categorias")), [c2.objectID.primaryKey])
        try nota.add([c1], to: categorias)
        try nota.setValue(.collection([.object(c1)]), for: categorias)
        XCTAssertEqual(keys(try nota.value(forKey: "categorias")), [c1.objectID.primaryKey])
        try store.save()
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM Z_1NOTAS")?.integer, 1)
    }

    func testAssociationsRecordedOneByOneAreFoundAtOnceAndWrittenInOrder() throws {
        let associations = try AssociationTable(database: store.database)
        let categoria = try store.insertObject(entityName: "Categoria")
        var notas: [ManagedObject] = []
        for i in 0..<(AssociationTable.pendingChunk + 55) {
            let nota = try store.insertObject(entityName: "Nota")
            notas.append(nota)
            try associations.insert(mapping: 0, source: categoria, destination: nota)
            if i % 61 == 0 {
                // The association made by the previous call is found by the next one.
                XCTAssertEqual(
                    try associations.sources(mapping: 0, destination: nota).map { $0.1 },
                    [categoria.objectID.primaryKey])
            }
        }
        XCTAssertEqual(try associations.count(mapping: 0), notas.count)
        XCTAssertEqual(
            try associations.destinations(mappings: [0], source: categoria).map { $0.1 },
            notas.map { $0.objectID.primaryKey })
        // Rows written by SQL after buffered ones come after them.
        try associations.insert(mapping: 1, source: categoria, destination: notas[0])
        try associations.writePending()
        try store.database.run("INSERT INTO cdm_association VALUES (1, 0, 0, 0, -1)")
        let order = try store.database.rows(
            "SELECT destination_pk FROM cdm_association WHERE mapping = 1 ORDER BY rowid")
        XCTAssertEqual(order.compactMap { $0.first?.integer }, [notas[0].objectID.primaryKey, -1])
    }

    func testBufferedInstancesOfTwoEntitiesAreWrittenWithTheirValuesAndLinksWhateverTheRuns() throws {
        let model = try ManagedObjectModel(
            json: """
                {"name": "Gente", "entities": [
                  {"name": "Persona", "attributes": [{"name": "nombre", "type": "string"},
                                                      {"name": "edad", "type": "integer64"}],
                   "relationships": [{"name": "ciudad", "destination": "Ciudad", "inverse": "gente"}]},
                  {"name": "Ciudad", "attributes": [{"name": "nombre", "type": "string"}],
                   "relationships": [{"name": "gente", "destination": "Persona", "inverse": "ciudad", "toMany": true}]}
                ]}
                """)
        let gente = try PersistentStore.create(at: scratch.file("g.sqlite"), model: model)
        defer { gente.close() }
        let ciudad = try XCTUnwrap(model.entity(named: "Persona")?.relationship(named: "ciudad"))
        var current = try gente.insertObject(entityName: "Ciudad")
        try current.setValue(.string("ciudad 0"), forKey: "nombre")
        // Runs of a whole chunk and shorter ones, broken by the other entity, written in one go.
        for i in 0..<230 {
            if i % 70 == 69 {
                current = try gente.insertObject(entityName: "Ciudad")
                try current.setValue(.string("ciudad \(i)"), forKey: "nombre")
            }
            let persona = try gente.insertObject(entityName: "Persona")
            try persona.setValue(.string("persona \(i)"), forKey: "nombre")
            try persona.setValue(.integer(Int64(i)), forKey: "edad")
            try persona.setValue(.object(current), for: ciudad)
        }
        try gente.save()
        XCTAssertEqual(try gente.database.scalar("SELECT COUNT(*) FROM ZPERSONA")?.integer, 230)
        XCTAssertEqual(try gente.database.scalar("SELECT COUNT(*) FROM ZCIUDAD")?.integer, 4)
        // Every row as written one by one: its values, its city (the last made before it), its entity.
        XCTAssertEqual(
            try gente.database.scalar(
                """
                SELECT COUNT(*) FROM ZPERSONA p JOIN ZCIUDAD c ON c.Z_PK = p.ZCIUDAD
                WHERE p.ZNOMBRE = 'persona ' || p.ZEDAD AND p.Z_PK = p.ZEDAD + 1 AND p.Z_OPT = 1
                AND p.Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Persona')
                AND c.ZNOMBRE = 'ciudad ' || (CASE WHEN p.ZEDAD < 69 THEN 0 ELSE (p.ZEDAD + 1) / 70 * 70 - 1 END)
                """)?.integer, 230)
    }

    func testAChangeToABufferedInstanceIsWrittenWithItAndAChangeAfterItsWriteByItself() throws {
        let nota = try store.insertObject(entityName: "Nota")
        XCTAssertTrue(nota.isBufferedInsert)
        try nota.setValue(.string("first"), forKey: "contenido")
        try nota.setValue(.string("second"), forKey: "contenido")
        // Nothing in the table yet: the buffer holds the row and its latest value.
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM ZNOTA")?.integer, 0)
        try store.flush()
        XCTAssertFalse(nota.isBufferedInsert)
        XCTAssertEqual(try store.database.scalar("SELECT ZCONTENIDO FROM ZNOTA")?.text, "second")
        // Written: a change now is an UPDATE of its own.
        try nota.setValue(.string("third"), forKey: "contenido")
        XCTAssertEqual(try store.database.scalar("SELECT ZCONTENIDO FROM ZNOTA")?.text, "third")
        // Many instances, the buffer written on its own along the way: each keeps its last value.
        let many = try (0..<(store.insertBatchSize + 10)).map { i -> ManagedObject in
            let made = try store.insertObject(entityName: "Nota")
            try made.setValue(.string("n\(i)"), forKey: "contenido")
            return made
        }
        for (i, made) in many.enumerated() { try made.setValue(.string("m\(i)"), forKey: "contenido") }
        try store.save()
        XCTAssertEqual(
            try store.database.scalar("SELECT COUNT(*) FROM ZNOTA WHERE ZCONTENIDO = 'm' || (Z_PK - 2)")?.integer,
            Int64(many.count))
    }

    func testAChangeToABufferedInstanceOfAClosedStoreIsRefused() throws {
        let nota = try store.insertObject(entityName: "Nota")
        store.close()
        XCTAssertFalse(nota.isBufferedInsert)
        XCTAssertThrowsError(try nota.setValue(.string("late"), forKey: "contenido"))
    }

    func testChunkedInsertsWriteEveryRowInOrderWhateverTheCount() throws {
        try store.database.run("CREATE TABLE chunked (a INTEGER, b INTEGER, c INTEGER)")
        let insert = ChunkedInsert(
            "INSERT INTO chunked (a, b, c)", columns: 3, rowsPerChunk: 4, database: store.database)
        var written: [Int64] = []
        // None, fewer than a chunk, exactly one, several with a partial one; the full chunk's statement reused.
        for rows in [0, 3, 4, 9, 8, 1] {
            let values = (0..<(rows * 3)).map { Int64(written.count + $0) }
            try insert.write(values)
            written += values
            let read = try store.database.rows("SELECT a, b, c FROM chunked ORDER BY rowid")
            XCTAssertEqual(read.flatMap { $0.compactMap { $0.integer } }, written, "after \(rows) rows")
        }
        // A trailing partial row is not written.
        try insert.write([1, 2, 3, 4])
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM chunked")?.integer, Int64(written.count / 3 + 1))
    }
}
