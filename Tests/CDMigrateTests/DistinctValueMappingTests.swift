import CSQLite
import XCTest

@testable import CDMigrate

/// An entity mapping with `cdmigrate.distinctValueKeyPath` makes one destination per distinct
/// value of a source attribute, as SQL (`INSERT … SELECT` of each value's first row) or row by
/// row, with the same rows; relationship mappings link each source to the destination of its value.
final class DistinctValueMappingTests: XCTestCase, SQLiteFileAccess {
    static let v2 = """
        {"name": "Notas", "entities": [
          {"name": "Nota", "attributes": [{"name": "contenido", "type": "string"}, {"name": "categoria", "type": "string", "optional": true},
                                          {"name": "prioridad", "type": "integer32", "optional": true}]}
        ]}
        """
    static let v3 = """
        {"name": "Notas", "entities": [
          {"name": "Nota", "attributes": [{"name": "contenido", "type": "string"}], "relationships": [
            {"name": "categorias", "destination": "Categoria", "inverse": "notas", "toMany": true},
            {"name": "nivel", "destination": "Nivel", "inverse": "notas"}]},
          {"name": "Categoria", "attributes": [{"name": "nombre", "type": "string"}, {"name": "primera", "type": "string", "optional": true}],
           "relationships": [{"name": "notas", "destination": "Nota", "inverse": "categorias", "toMany": true}]},
          {"name": "Nivel", "attributes": [{"name": "valor", "type": "integer32"}], "relationships": [
            {"name": "notas", "destination": "Nota", "inverse": "nivel", "toMany": true, "ordered": true}]}
        ]}
        """
    static let categorias: [String?] = [
        "Trabajo", nil, "Casa", "trabajo", "", "Trabajo", "Música", "Casa", nil, "Mu\u{0301}sica", "Trabajo",
    ]
    static let prioridades: [Int64?] = [1, 2, nil, 1, 3, 2, 2, nil, 1, 3, 1]

    var scratch: ScratchDirectory!
    var source: String!
    var from: ManagedObjectModel!
    var to: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        from = try ManagedObjectModel(json: Self.v2)
        to = try ManagedObjectModel(json: Self.v3)
        source = scratch.file("v2.sqlite")
        try makeStore(source, from) { store in
            for (i, categoria) in Self.categorias.enumerated() {
                try insert(
                    store, "Nota",
                    [
                        "contenido": .string("N\(i)"), "categoria": categoria.map { .string($0) } ?? .null,
                        "prioridad": Self.prioridades[i].map { .integer($0) } ?? .null,
                    ])
            }
        }
    }

    static func lookUp(_ mapping: String, _ key: String) -> String {
        "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"\(mapping)\\\", \(key))"
    }

    func mapping(
        userInfo: String = #"{"cdmigrate.distinctValueKeyPath": "categoria"}"#, predicate: String = "TRUEPREDICATE",
        categoriaRelationships: String = "", policy: String = "", levels: Bool = false
    ) throws -> MappingModel {
        let nivel = levels ? ", \"nivel\": \"\(Self.lookUp("NotaToNivel", "$source"))\"" : ""
        let levelMapping =
            levels
            ? """
              ,{"name": "NotaToNivel", "sourceEntity": "Nota", "destinationEntity": "Nivel", "predicate": "TRUEPREDICATE",
                "userInfo": {"cdmigrate.distinctValueKeyPath": "prioridad"}, "attributeMappings": {"valor": "$source.prioridad"}}
            """ : ""
        return try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "NotaToNota", "sourceEntity": "Nota", "destinationEntity": "Nota", "predicate": "TRUEPREDICATE",
                   "attributeMappings": {"contenido": "$source.contenido"},
                   "relationshipMappings": {"categorias": "\(Self.lookUp("NotaToCategoria", "$source"))"\(nivel)}},
                  {"name": "NotaToCategoria", "sourceEntity": "Nota", "destinationEntity": "Categoria", "predicate": "\(predicate)",
                   "userInfo": \(userInfo)\(policy),
                   "attributeMappings": {"nombre": "$source.categoria", "primera": "$source.contenido"}\(categoriaRelationships)}\(levelMapping)
                ]}
                """)
    }

    /// Runs row by row and as SQL: the stores must be the same. Returns the SQL run.
    func checkSame(_ model: MappingModel, line: UInt = #line) throws -> (MigrationReport, String) {
        let perInstance = try MigrationManager(sourceModel: from, destinationModel: to, mappingModel: model)
        perInstance.pushDownSQL = false
        let expected = scratch.file("rows-\(line).sqlite")
        _ = try perInstance.migrateStore(from: source, to: expected)
        let bySQL = try MigrationManager(sourceModel: from, destinationModel: to, mappingModel: model)
        let path = scratch.file("sql-\(line).sqlite")
        let report = try bySQL.migrateStore(from: source, to: path)
        let (want, got) = (entityTables(expected), entityTables(path))
        XCTAssertEqual(Set(got.keys), Set(want.keys), line: line)
        for table in want.keys.sorted() { XCTAssertEqual(got[table], want[table], "table \(table)", line: line) }
        return (report, path)
    }

    func counts(_ report: MigrationReport, _ name: String) -> MigrationReport.MappingCounts? {
        report.mappings.first { $0.entityMappingName == name }
    }

    func testOneCategoriaPerDistinctNonEmptyStringLinkedToItsNotes() throws {
        let (report, path) = try checkSame(try mapping())
        // First occurrence order; nil and "" make nothing; case and Unicode normalization count.
        XCTAssertEqual(
            rows(path, "SELECT Z_PK, ZNOMBRE, ZPRIMERA FROM ZCATEGORIA ORDER BY Z_PK"),
            ["1|Trabajo|N0", "2|Casa|N2", "3|trabajo|N3", "4|Música|N6", "5|Mu\u{0301}sica|N9"])
        XCTAssertEqual(
            rows(
                path,
                "SELECT n.ZCONTENIDO, c.ZNOMBRE FROM ZNOTA n LEFT JOIN Z_1NOTAS j ON j.Z_3NOTAS = n.Z_PK LEFT JOIN ZCATEGORIA c ON c.Z_PK = j.Z_1CATEGORIAS ORDER BY n.Z_PK"
            ),
            [
                "N0|Trabajo", "N1|NULL", "N2|Casa", "N3|trabajo", "N4|NULL", "N5|Trabajo", "N6|Música", "N7|Casa",
                "N8|NULL", "N9|Mu\u{0301}sica", "N10|Trabajo",
            ])
        let linked = rows(
            path,
            "SELECT c.ZNOMBRE, COUNT(*) FROM ZCATEGORIA c JOIN Z_1NOTAS j ON j.Z_1CATEGORIAS = c.Z_PK GROUP BY c.Z_PK ORDER BY c.Z_PK"
        )
        XCTAssertEqual(linked, ["Trabajo|3", "Casa|2", "trabajo|1", "Música|1", "Mu\u{0301}sica|1"])
        XCTAssertEqual(counts(report, "NotaToCategoria")?.instancesBySQL, true)
        XCTAssertEqual(counts(report, "NotaToCategoria")?.associations, 8, "one per note with a value")
        XCTAssertEqual(counts(report, "NotaToNota")?.relationshipsBySQL, true)
    }

    func testTheDistinctMappingsOwnRelationshipMappingsAddUpWhatItsSourcesGive() throws {
        let notas = #", "relationshipMappings": {"notas": "\#(Self.lookUp("NotaToNota", "$source"))"}"#
        let (report, path) = try checkSame(try mapping(categoriaRelationships: notas))
        XCTAssertEqual(counts(report, "NotaToCategoria")?.relationshipsBySQL, true)
        XCTAssertEqual(rows(path, "SELECT COUNT(*) FROM Z_1NOTAS"), ["8"])
    }

    func testAFilteredDistinctMappingAndAnOrderedToManyOfNumbers() throws {
        let (report, path) = try checkSame(try mapping(predicate: "contenido != 'N0'", levels: true))
        XCTAssertEqual(
            rows(path, "SELECT ZNOMBRE, ZPRIMERA FROM ZCATEGORIA ORDER BY Z_PK").first, "Casa|N2",
            "N0 is left out: Casa comes first")
        XCTAssertEqual(rows(path, "SELECT ZNOMBRE, ZPRIMERA FROM ZCATEGORIA WHERE ZNOMBRE = 'Trabajo'"), ["Trabajo|N5"])
        XCTAssertEqual(rows(path, "SELECT ZVALOR FROM ZNIVEL ORDER BY Z_PK"), ["1", "2", "3"])
        // The ordered inverse numbers each level's notes in the notes' order: set per note by the to-one.
        XCTAssertEqual(
            rows(path, "SELECT n.ZCONTENIDO, n.Z_FOK_NIVEL FROM ZNOTA n WHERE n.ZNIVEL = 1 ORDER BY n.Z_FOK_NIVEL"),
            ["N0|1", "N3|2", "N8|3", "N10|4"])
        XCTAssertEqual(counts(report, "NotaToNivel")?.instancesBySQL, true)
    }

    func testNoValueAtAllMakesNothing() throws {
        let (report, path) = try checkSame(try mapping(predicate: "categoria == nil OR categoria == ''"))
        XCTAssertEqual(rows(path, "SELECT COUNT(*) FROM ZCATEGORIA"), ["0"])
        XCTAssertEqual(counts(report, "NotaToCategoria")?.associations, 0)
    }

    func testABadDistinctValueKeyIsAnErrorNamingTheMapping() throws {
        let cases: [(String, String, String)] = [
            (
                #"{"cdmigrate.distinctValueKeyPath": "categorya"}"#, "",
                "names 'categorya', which is not an attribute of source entity 'Nota'"
            ),
            (#"{"cdmigrate.distinctValueKeyPath": "categoria.length"}"#, "", "is a key path of several keys"),
            (#"{"cdmigrate.distinctValueKeyPath": 3}"#, "", "must be text naming a source attribute"),
            (
                #"{"cdmigrate.distinctValueKeyPath": "categoria"}"#, #", "policy": "SomePolicy""#,
                "takes the place of a policy"
            ),
        ]
        for (info, policy, message) in cases {
            XCTAssertThrowsError(
                try MigrationManager(
                    sourceModel: from, destinationModel: to,
                    mappingModel: try mapping(userInfo: info, policy: policy))
            ) { error in
                let text = "\(error)"
                XCTAssertTrue(
                    text.contains("entity mapping 'NotaToCategoria': user info 'cdmigrate.distinctValueKeyPath'")
                        && text.contains(message), text)
            }
        }
    }
}
