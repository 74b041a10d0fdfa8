import Foundation
import XCTest

@testable import CDMigrate

/// Consecutive steps of a chain fused into one pass give the store the step-by-step run gives:
/// every table row by row (Z_PRIMARYKEY and Z_METADATA with its version hashes among them), every
/// index and trigger, and the same amount of loss; steps that cannot be fused exactly run on
/// their own, and the plan says why.
final class FusedChainTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    /// Every table's rows (sorted, with their storage classes), every schema object's SQL, and
    /// the pragmas a store's file carries.
    func dump(_ path: String) throws -> [String: [String]] {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        var result: [String: [String]] = [:]
        // Columns by name: a step done as schema changes adds a column at the end of its table
        // (docs/schema-step.md), where a new store has it in Core Data's order.
        for row in try database.rows("SELECT type, name, sql FROM sqlite_master ORDER BY name") {
            guard let type = row.first?.text, let name = row.element(at: 1)?.text else { continue }
            guard type == "table" else {
                result[type + " " + name] = [row.element(at: 2)?.text ?? ""]
                continue
            }
            let columns = try database.rows("SELECT name, type FROM pragma_table_info(?)", [.string(name)]).map {
                "\($0.first?.text ?? "") \($0.element(at: 1)?.text ?? "")"
            }.sorted()
            result["columns " + name] = columns
            let list = columns.map { SQLiteDatabase.quote(String($0.split(separator: " ")[0])) }.joined(separator: ", ")
            result[name] = try database.rows("SELECT \(list) FROM \(SQLiteDatabase.quote(name))").map { r in
                r.map { value -> String in
                    switch value {
                    case .null: return "NULL"
                    case .integer(let i): return "int \(i)"
                    case .real(let d): return "real \(d)"
                    case .text(let t): return "text \(t)"
                    case .blob(let b): return "blob \(b)"
                    }
                }.joined(separator: " | ")
            }.sorted()
        }
        for pragma in ["integrity_check", "journal_mode", "auto_vacuum", "user_version"] {
            result["pragma " + pragma] = try database.rows("PRAGMA \(pragma)").map { "\($0.first ?? .null)" }
        }
        return result
    }

    func assertSameStores(_ a: String, _ b: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let x = try dump(a)
        let y = try dump(b)
        XCTAssertGreaterThan(x.count, 4, file: file, line: line)
        XCTAssertEqual(Set(x.keys), Set(y.keys), file: file, line: line)
        for key in x.keys.sorted() where x[key] != y[key] {
            XCTFail("\(key) differs: \(x[key]?.prefix(5) ?? []) vs \(y[key]?.prefix(5) ?? [])", file: file, line: line)
        }
    }

    /// A model folder with the given versions (`v1.json`, `v2.json`, …).
    func modelFolder(_ versions: [String], mappings: [String: String] = [:]) throws -> String {
        let folder = scratch.file("models-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (index, text) in versions.enumerated() {
            try text.write(toFile: folder + "/v\(index + 1).json", atomically: true, encoding: .utf8)
        }
        for (name, text) in mappings {
            try text.write(toFile: folder + "/\(name).mapping.json", atomically: true, encoding: .utf8)
        }
        return folder
    }

    /// Runs the chain fused and step by step; asserts the same stores and losses; returns the fused run's passes.
    @discardableResult
    func assertFusedRunIsTheStepByStepRun(
        _ source: String, _ set: ModelSet, file: StaticString = #filePath, line: UInt = #line
    ) throws -> [ChainPass] {
        let fusedPath = scratch.file("fused-\(UUID().uuidString).sqlite")
        let stepsPath = scratch.file("steps-\(UUID().uuidString).sqlite")
        let fused = try StagedMigrationManager(storeAt: source, models: set)
        let passes = fused.passes
        let fusedReport = try fused.migrateStore(to: fusedPath)
        let steps = try StagedMigrationManager(storeAt: source, models: set)
        steps.fusesSteps = false
        XCTAssertEqual(steps.passes.count, steps.plan.stages.count, file: file, line: line)
        let stepsReport = try steps.migrateStore(to: stepsPath)
        XCTAssertEqual(fusedReport.stages.count, passes.count, file: file, line: line)
        XCTAssertEqual(stepsReport.stages.count, steps.plan.stages.count, file: file, line: line)
        try assertSameStores(fusedPath, stepsPath, file: file, line: line)
        func lost(_ report: StagedMigrationReport) -> Int {
            report.stages.reduce(0) { $0 + $1.report.losses.losses.reduce(0) { $0 + $1.count } }
        }
        XCTAssertEqual(lost(fusedReport), lost(stepsReport), "values and instances lost", file: file, line: line)
        func last(_ report: StagedMigrationReport) -> [String] {
            report.stages.last.map { $0.report.destinationCounts.map { "\($0.entityName) \($0.count)" } } ?? []
        }
        XCTAssertEqual(last(fusedReport), last(stepsReport), file: file, line: line)
        return passes
    }

    static let v1 = #"""
        {"entities": [
          {"name": "Note", "attributes": [
            {"name": "title", "type": "string"}, {"name": "body", "type": "string"},
            {"name": "rank", "type": "integer32"}, {"name": "extra", "type": "string"}],
           "relationships": [{"name": "tags", "destination": "Tag", "inverse": "note", "toMany": true}]},
          {"name": "Tag", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "note", "destination": "Note", "inverse": "tags"}]},
          {"name": "Old", "attributes": [{"name": "x", "type": "string"}]}]}
        """#
    /// title → heading, rank integer32 → integer64, extra dropped, Tag → Label, tags → labels, Old removed, New added.
    static let v2 = #"""
        {"entities": [
          {"name": "Note", "attributes": [
            {"name": "heading", "type": "string", "renamingIdentifier": "title"}, {"name": "body", "type": "string"},
            {"name": "rank", "type": "integer64"}],
           "relationships": [
             {"name": "labels", "destination": "Label", "inverse": "note", "toMany": true, "renamingIdentifier": "tags"}]},
          {"name": "Label", "renamingIdentifier": "Tag", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "note", "destination": "Note", "inverse": "labels"}]},
          {"name": "New", "attributes": [{"name": "y", "type": "string"}]}]}
        """#
    /// heading → caption, rank → score (after its type change), extra added back, Label → Category, labels → categories.
    static let v3 = #"""
        {"entities": [
          {"name": "Note", "attributes": [
            {"name": "caption", "type": "string", "renamingIdentifier": "heading"}, {"name": "body", "type": "string"},
            {"name": "score", "type": "integer64", "renamingIdentifier": "rank"}, {"name": "extra", "type": "string"}],
           "relationships": [
             {"name": "categories", "destination": "Category", "inverse": "note", "toMany": true,
              "renamingIdentifier": "labels"}]},
          {"name": "Category", "renamingIdentifier": "Label", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "note", "destination": "Note", "inverse": "categories"}]},
          {"name": "New", "attributes": [{"name": "y", "type": "string"}]}]}
        """#
    /// An attribute added with a default value, an index.
    static let v4 = #"""
        {"entities": [
          {"name": "Note", "attributes": [
            {"name": "caption", "type": "string", "indexed": true}, {"name": "body", "type": "string"},
            {"name": "score", "type": "integer64"}, {"name": "extra", "type": "string"},
            {"name": "mood", "type": "string", "default": "calm"}],
           "relationships": [{"name": "categories", "destination": "Category", "inverse": "note", "toMany": true}]},
          {"name": "Category", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "note", "destination": "Note", "inverse": "categories"}]},
          {"name": "New", "attributes": [{"name": "y", "type": "string"}]}]}
        """#

    /// An optional attribute added.
    static let v5 = v4.replacingOccurrences(
        of: #"[{"name": "name", "type": "string"}],"#,
        with: #"[{"name": "name", "type": "string"}, {"name": "color", "type": "string"}],"#)

    func makeV1Store(_ model: ManagedObjectModel, notes: Int = 40) throws -> String {
        let path = scratch.file("v1-\(UUID().uuidString).sqlite")
        try makeStore(path, model) { store in
            for i in 0..<notes {
                var values: [String: Value] = ["title": .string("note \(i)"), "rank": .integer(Int64(i * 7))]
                if i % 3 != 0 { values["body"] = .string("body \(i)") }
                if i % 2 == 0 { values["extra"] = .string("extra \(i)") }
                let note = try insert(store, "Note", values)
                for j in 0..<(i % 4) {
                    let tag = try insert(store, "Tag", ["name": .string("tag \(i).\(j)")])
                    try tag.setValue(.object(note), forKey: "note")
                }
            }
            for i in 0..<5 { try insert(store, "Old", ["x": .string("old \(i)")]) }
        }
        return path
    }

    /// Renames following renames, a dropped-then-re-added attribute (not carried), a type change
    /// then a rename, an entity renamed twice, a relationship renamed, an entity removed and
    /// another added: the four inferred steps run as one pass and give the step-by-step store.
    func testFourInferredStepsFuseIntoOnePassWithTheStepByStepResult() throws {
        let folder = try modelFolder([Self.v1, Self.v2, Self.v3, Self.v4, Self.v5])
        let set = try ModelSet(contentsOf: folder)
        let source = try makeV1Store(try XCTUnwrap(set.models["v1"]))
        let passes = try assertFusedRunIsTheStepByStepRun(source, set)
        XCTAssertEqual(passes.count, 1, passes.map { $0.notFusedWithNext ?? "" }.joined(separator: "; "))
        let fused = try XCTUnwrap(passes.first)
        XCTAssertTrue(fused.isFused)
        XCTAssertEqual(fused.steps, 0..<4)
        XCTAssertEqual(fused.stage.fusedStages.map { $0.destinationVersionName }, ["v2", "v3", "v4", "v5"])
        XCTAssertTrue(fused.stage.isInferred)
        let mapping = try XCTUnwrap(fused.stage.mappingModels.first)
        let note = try XCTUnwrap(mapping.entityMappings.first { $0.destinationEntityName == "Note" })
        XCTAssertEqual(
            note.attributeMapping(named: "caption")?.valueExpressionText, #"FUNCTION($source, "valueForKey:", "title")"#
        )
        XCTAssertEqual(
            note.attributeMapping(named: "score")?.valueExpressionText, #"FUNCTION($source, "valueForKey:", "rank")"#)
        XCTAssertNil(note.attributeMapping(named: "extra")?.valueExpression, "dropped then re-added: not carried")
        XCTAssertEqual(
            note.relationshipMapping(named: "categories")?.valueExpressionText,
            #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "tags", FUNCTION($source, "valueForKey:", "tags"))"#
        )
        XCTAssertEqual(
            mapping.entityMappings.first { $0.destinationEntityName == "Category" }?.sourceEntityName, "Tag")
        XCTAssertEqual(mapping.entityMappings.first { $0.mappingType == .remove }?.sourceEntityName, "Old")
        XCTAssertEqual(mapping.entityMappings.first { $0.mappingType == .add }?.destinationEntityName, "New")
        // The fused run really carried the values.
        let out = scratch.file("check.sqlite")
        try StagedMigrationManager(storeAt: source, models: set).migrateStore(to: out)
        let rows = try SQLiteDatabase(path: out, mode: .readOnly)
        defer { rows.close() }
        XCTAssertEqual(try rows.scalar("SELECT ZCAPTION FROM ZNOTE WHERE ZSCORE = 14")?.text, "note 2")
        XCTAssertEqual(try rows.scalar("SELECT COUNT(*) FROM ZNOTE WHERE ZEXTRA IS NOT NULL")?.integer, 0)
        XCTAssertEqual(try rows.scalar("SELECT COUNT(*) FROM ZNOTE WHERE ZMOOD = 'calm'")?.integer, 40)
        XCTAssertEqual(try rows.scalar("SELECT COUNT(*) FROM ZCATEGORY WHERE ZNOTE IS NOT NULL")?.integer, 60)
    }

    /// The plan JSON has one pass for the fused steps, with the steps it runs.
    func testThePlanJSONListsThePassesAndWhichStepsWereFused() throws {
        let folder = try modelFolder([Self.v1, Self.v2, Self.v3])
        let set = try ModelSet(contentsOf: folder)
        let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: set)
        let text = try plan.json(in: set).serialized()
        XCTAssertTrue(text.contains(#""passes":[{"from":"v1","to":"v3","steps":[0,1],"fused":true"#), text)
        let stepByStep = try plan.json(in: set, fusing: false).serialized()
        XCTAssertTrue(stepByStep.contains(#""steps":[0],"fused":false"#), stepByStep)
    }

    /// A step that reads a derived attribute of the model before, an attribute converted twice,
    /// and an intermediate validation rule the last model does not keep: not fused, the plan says
    /// why, and the chain still gives the step-by-step store.
    func testStepsThatCannotBeComposedExactlyRunOnTheirOwn() throws {
        let base = #"{"entities": [{"name": "Item", "attributes": [{"name": "name", "type": "string"}, %@]}]}"#
        func model(_ attributes: String) -> String { base.replacingOccurrences(of: "%@", with: attributes) }
        let cases: [(versions: [String], reason: String)] = [
            (
                [
                    model(#"{"name": "n", "type": "integer16"}"#),
                    model(#"{"name": "n", "type": "integer32"}"#),
                    model(#"{"name": "n", "type": "double"}"#),
                ], "changes type twice"
            ),
            (
                [
                    model(#"{"name": "shout", "type": "string"}"#),
                    model(#"{"name": "shout", "type": "string", "derivationExpression": "uppercase:(name)"}"#),
                    model(#"{"name": "loud", "type": "string", "renamingIdentifier": "shout"}"#),
                ], "derived"
            ),
            (
                [
                    model(#"{"name": "n", "type": "integer64"}"#),
                    model(#"{"name": "n", "type": "integer64", "maxValue": 1000}"#),
                    model(#"{"name": "n", "type": "integer64"}"#),
                ], "validation rules"
            ),
            (
                [
                    model(#"{"name": "n", "type": "integer64"}"#),
                    model(#"{"name": "n", "type": "integer64"}, {"name": "m", "type": "integer64", "default": 3}"#),
                    model(#"{"name": "n", "type": "integer64"}, {"name": "m", "type": "integer64", "default": 4}"#),
                ], "default value"
            ),
        ]
        for (versions, reason) in cases {
            let set = try ModelSet(contentsOf: try modelFolder(versions))
            let source = scratch.file("items-\(UUID().uuidString).sqlite")
            try makeStore(source, try XCTUnwrap(set.models["v1"])) { store in
                for i in 0..<10 {
                    let item = try insert(store, "Item", ["name": .string("item \(i)")])
                    if let attribute = item.entity.attributes.first(where: { $0.name == "n" }) {
                        try item.setValue(.integer(Int64(i * 90)), for: attribute)
                    }
                }
            }
            let passes = try assertFusedRunIsTheStepByStepRun(source, set)
            XCTAssertEqual(passes.count, 2, reason)
            let why = passes.first?.notFusedWithNext ?? ""
            XCTAssertTrue(why.hasPrefix("v2 → v3: "), why)
            XCTAssertTrue(why.contains(reason), why)
        }
    }

    /// A step whose mapping model names a policy runs on its own; the steps around it may fuse.
    func testAStepWithAPolicyRunsOnItsOwn() throws {
        let v1 = try ManagedObjectModel(json: Self.v1)
        let v2 = try ManagedObjectModel(json: Self.v2)
        var mapping = try MappingModel.inferred(from: v1, to: v2).jsonText()
        mapping = mapping.replacingOccurrences(
            of: #""name" : "IEM_Transform_Note","#, with: #""name" : "IEM_Transform_Note", "policy": "NotePolicy","#)
        mapping = mapping.replacingOccurrences(
            of: #""name": "IEM_Transform_Note","#, with: #""name": "IEM_Transform_Note", "policy": "NotePolicy","#)
        XCTAssertTrue(mapping.contains("NotePolicy"), mapping)
        let set = try ModelSet(
            contentsOf: try modelFolder([Self.v1, Self.v2, Self.v3, Self.v4], mappings: ["one-to-two": mapping]))
        let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: set)
        let passes = plan.passes()
        XCTAssertEqual(passes.map { $0.steps }, [0..<1, 1..<3])
        XCTAssertEqual(passes.first?.notFusedWithNext, "v1 → v2: the step runs policy 'NotePolicy'")
        XCTAssertEqual(plan.passes(fusing: false).count, 3)
    }

    /// Apple's renames stores (Core Data wrote one per version): from every version the chain to
    /// v2.0.0 fuses and gives the step-by-step store.
    func testAppleRenamesChainsFuseAndGiveTheStepByStepStores() throws {
        let set = try ModelSet(contentsOf: TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld")
        for version in ["1.0.0", "1.1.0", "1.1.2", "1.2.0"] {
            let source = try copyFixtureStore("apple-stores/renames/Example_v\(version).sqlite", into: scratch.path)
            let passes = try assertFusedRunIsTheStepByStepRun(source, set)
            XCTAssertEqual(passes.count, 1, "\(version): \(passes.map { $0.notFusedWithNext ?? "" })")
        }
    }
}

extension FusedChainTests {
    /// A step done as schema changes that adds an attribute with a default value: the rows
    /// already there read the default (which the column's `DEFAULT` clause gives them), as the
    /// general path writes it into every row.
    func testAnAttributeAddedWithADefaultAsSchemaChangesKeepsItInTheRows() throws {
        let set = try ModelSet(contentsOf: try modelFolder([Self.v1, Self.v2, Self.v3, Self.v4]))
        let source = try makeV1Store(try XCTUnwrap(set.models["v1"]))
        let steps = try StagedMigrationManager(storeAt: source, models: set)
        steps.fusesSteps = false
        let out = scratch.file("mood.sqlite")
        let report = try steps.migrateStore(to: out)
        XCTAssertEqual(report.stages.last?.report.bySchemaChanges, true)
        let database = try SQLiteDatabase(path: out, mode: .readOnly)
        defer { database.close() }
        XCTAssertEqual(try database.scalar("SELECT COUNT(*) FROM ZNOTE WHERE ZMOOD = 'calm'")?.integer, 40)
    }
}

extension FusedChainTests {

    /// A written mapping model that reads source attributes fuses with the inferred steps after it,
    /// and gives the step-by-step store.
    func testAWrittenMappingModelFusesWithTheInferredStepsAfterIt() throws {
        let v2WithOld = Self.v2.replacingOccurrences(
            of: #"{"name": "New", "attributes""#,
            with: #"{"name": "Old", "attributes": [{"name": "x", "type": "string"}]}, {"name": "New", "attributes""#)
        let v3WithOld = Self.v3.replacingOccurrences(
            of: #"{"name": "New", "attributes""#,
            with: #"{"name": "Old", "attributes": [{"name": "x", "type": "string"}]}, {"name": "New", "attributes""#)
        let v1 = try ManagedObjectModel(json: Self.v1)
        let v2 = try ManagedObjectModel(json: v2WithOld)
        var text = try MappingModel.inferred(from: v1, to: v2).jsonText(indent: 0)
        text = text.replacingOccurrences(of: #"FUNCTION($source, \"valueForKey:\", \"title\")"#, with: "$source.title")
        XCTAssertTrue(text.contains("$source.title"), text)
        let set = try ModelSet(
            contentsOf: try modelFolder([Self.v1, v2WithOld, v3WithOld], mappings: ["one-to-two": text]))
        XCTAssertEqual(set.mappingModels.count, 1)
        let source = try makeV1Store(try XCTUnwrap(set.models["v1"]))
        let passes = try assertFusedRunIsTheStepByStepRun(source, set)
        XCTAssertEqual(passes.map(\.steps), [0..<2], passes.map { $0.notFusedWithNext ?? "" }.description)
        XCTAssertEqual(passes.first?.stage.isInferred, false)
        XCTAssertEqual(passes.first?.stage.fusedStages.map(\.mappingModelNames), [["one-to-two"], ["inferred"]])
    }

    /// A written mapping model whose attribute mapping computes a value, or whose entity mapping
    /// filters its source instances, is not fused; the plan says which.
    func testComputedValuesAndFilteredSourcesAreNotFused() throws {
        let v1 = try ManagedObjectModel(json: Self.v1)
        let v2 = try ManagedObjectModel(json: Self.v2)
        let inferred = try MappingModel.inferred(from: v1, to: v2).jsonText(indent: 0)
        let cases = [
            (
                inferred.replacingOccurrences(
                    of: #"FUNCTION($source, \"valueForKey:\", \"title\")"#, with: "uppercase:($source.title)"),
                "computes its value"
            ),
            (
                inferred.replacingOccurrences(of: #"\"Note\", \"TRUEPREDICATE\""#, with: #"\"Note\", \"rank > 3\""#),
                "filters"
            ),
        ]
        for (mapping, reason) in cases {
            XCTAssertNotEqual(mapping, inferred)
            let set = try ModelSet(
                contentsOf: try modelFolder([Self.v1, Self.v2, Self.v3], mappings: ["one-to-two": mapping]))
            let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: set)
            let passes = plan.passes()
            XCTAssertEqual(passes.map(\.steps), [0..<1, 1..<2], reason)
            let why = passes.first?.notFusedWithNext ?? ""
            XCTAssertTrue(why.hasPrefix("v2 → v3: ") && why.contains(reason), why)
        }
    }
}

extension FusedChainTests {
    /// Renames and added attributes over three steps: the fused pass is itself a step SQLite can
    /// express as schema changes, and runs as one.
    func testAFusedPassOfRenamesAndAddedAttributesRunsAsSchemaChanges() throws {
        let base = #"{"entities": [{"name": "Item", "attributes": [%@]}]}"#
        func model(_ attributes: String) -> String { base.replacingOccurrences(of: "%@", with: attributes) }
        let set = try ModelSet(
            contentsOf: try modelFolder([
                model(#"{"name": "a", "type": "string"}, {"name": "n", "type": "integer64"}"#),
                model(
                    #"{"name": "b", "type": "string", "renamingIdentifier": "a"}, {"name": "n", "type": "integer64"}"#),
                model(
                    #"{"name": "b", "type": "string"}, {"name": "n", "type": "integer64"}, {"name": "x", "type": "string"}"#
                ),
                model(
                    #"{"name": "c", "type": "string", "renamingIdentifier": "b"}, {"name": "n", "type": "integer64"}, {"name": "x", "type": "string"}, {"name": "d", "type": "integer16", "default": 7}"#
                ),
            ]))
        let source = scratch.file("items.sqlite")
        try makeStore(source, try XCTUnwrap(set.models["v1"])) { store in
            for i in 0..<20 { try insert(store, "Item", ["a": .string("item \(i)"), "n": .integer(Int64(i))]) }
        }
        let passes = try assertFusedRunIsTheStepByStepRun(source, set)
        XCTAssertEqual(passes.map(\.steps), [0..<3])
        let out = scratch.file("fused-schema.sqlite")
        let report = try StagedMigrationManager(storeAt: source, models: set).migrateStore(to: out)
        XCTAssertEqual(report.stages.count, 1)
        XCTAssertEqual(
            report.stages.first?.report.bySchemaChanges, true, report.stages.first?.report.schemaChangesNotDone ?? "")
        XCTAssertEqual(report.stepCount, 3)
        let database = try SQLiteDatabase(path: out, mode: .readOnly)
        defer { database.close() }
        XCTAssertEqual(try database.scalar("SELECT COUNT(*) FROM ZITEM WHERE ZC LIKE 'item %' AND ZD = 7")?.integer, 20)
    }
}

extension FusedChainTests {
    /// A written mapping model whose relationship mappings name the entity mapping of their targets
    /// (`destinationInstancesForEntityMappingNamed:sourceInstances:`, as Xcode writes them) fuses
    /// when it names the one entity mapping that takes the targets, and not when it names another.
    func testRelationshipsFoundByEntityMappingNameFuseWhenTheNameIsTheTargetsMapping() throws {
        let withOld = #"{"name": "Old", "attributes": [{"name": "x", "type": "string"}]}, {"name": "New", "attributes""#
        let v2 = Self.v2.replacingOccurrences(of: #"{"name": "New", "attributes""#, with: withOld)
        let v3 = Self.v3.replacingOccurrences(of: #"{"name": "New", "attributes""#, with: withOld)
        let inferred = try MappingModel.inferred(
            from: try ManagedObjectModel(json: Self.v1), to: try ManagedObjectModel(json: v2)
        ).jsonText(indent: 0)
        func named(_ relationship: String, _ mapping: String) -> (String, String) {
            (
                #"FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\#(relationship)\", FUNCTION($source, \"valueForKey:\", \"\#(relationship)\"))"#,
                #"FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\#(mapping)\", $source.\#(relationship))"#
            )
        }
        for (labelsMapping, fuses) in [("IEM_Transform_Label", true), ("IEM_Copy_Old", false)] {
            var text = inferred
            for (old, new) in [named("tags", labelsMapping), named("note", "IEM_Transform_Note")] {
                XCTAssertTrue(text.contains(old), text)
                text = text.replacingOccurrences(of: old, with: new)
            }
            let set = try ModelSet(contentsOf: try modelFolder([Self.v1, v2, v3], mappings: ["one-to-two": text]))
            let source = try makeV1Store(try XCTUnwrap(set.models["v1"]))
            let passes = try assertFusedRunIsTheStepByStepRun(source, set)
            XCTAssertEqual(passes.count, fuses ? 1 : 2, passes.map { $0.notFusedWithNext ?? "" }.description)
            if !fuses {
                XCTAssertTrue(passes.first?.notFusedWithNext?.contains("no single entity mapping") == true)
            }
        }
    }
}
