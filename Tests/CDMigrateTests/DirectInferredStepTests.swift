import Foundation
import XCTest

@testable import CDMigrate

/// Core Data's automatic migration infers one mapping straight from the store's model to the
/// current one: plans offer that step, take it where the version-by-version steps cannot be
/// inferred or ordered, and judge "becomes non-optional" by the store's rows.
final class DirectInferredStepTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }

    /// A folder of JSON models, one per version (`versions`: name → entities JSON), with
    /// `current-version` naming `current`.
    func modelFolder(_ versions: [(String, String)], current: String? = nil, name: String = "models") throws -> String {
        let folder = scratch.file(name)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, entities) in versions {
            try #"{"name": "M", "versionIdentifier": "\#(name)", "entities": [\#(entities)]}"#
                .write(toFile: folder + "/" + name + ".model.json", atomically: true, encoding: .utf8)
        }
        if let current { try current.write(toFile: folder + "/current-version", atomically: true, encoding: .utf8) }
        return folder
    }

    func model(_ name: String, _ entities: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(json: #"{"name": "M", "versionIdentifier": "\#(name)", "entities": [\#(entities)]}"#)
    }

    func steps(_ plan: MigrationPlan) -> [String] {
        plan.stages.map { "\($0.sourceVersionName)→\($0.destinationVersionName)" }
    }

    static let item = #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}]}"#
    static let itemWithKind =
        #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "kind", "type": "string", "optional": false}]}"#
    static let itemRequired =
        #"{"name": "Item", "attributes": [{"name": "title", "type": "string", "optional": false}]}"#

    // MARK: The direct step taken

    func testAChainStepFailingARuleTheDirectStepMeetsTakesTheDirectStep() throws {
        // v2 adds a non-optional attribute without a default, which v3 removes again: v1 → v2
        // cannot be inferred for a store with rows, v1 → v3 (no change) can.
        let folder = try modelFolder([("v1", Self.item), ("v2", Self.itemWithKind), ("v3", Self.item)], current: "v3")
        let set = try ModelSet(contentsOf: folder)
        let store = scratch.file("v1.sqlite")
        try makeStore(store, try XCTUnwrap(set.models["v1"])) { s in
            for title in ["a", "b"] { try insert(s, "Item", ["title": .string(title)]) }
        }
        let plan = try MigrationPlan(storeAt: store, models: set)
        XCTAssertEqual(steps(plan), ["v1→v3"])
        let stage = try XCTUnwrap(plan.stages.first)
        XCTAssertTrue(stage.isDirect && stage.isInferred)
        XCTAssertTrue(stage.reason.contains("v1 → v2 cannot be inferred"), stage.reason)
        XCTAssertTrue(stage.reason.contains("2 'Item' instances of the store have no value for it"), stage.reason)
        XCTAssertTrue(stage.reason.contains("it passes over 'v2'"), stage.reason)
        XCTAssertTrue(
            plan.warnings.contains { $0.contains("the plan takes the inferred step v1 → v3 instead") },
            "\(plan.warnings)")
        XCTAssertNil(plan.directStep, "the plan takes it already")
        let report = try StagedMigrationManager(plan: plan).migrateStore(to: scratch.file("v3.sqlite"))
        XCTAssertEqual(report.stages.count, 1)
        let migrated = try PersistentStore.open(at: scratch.file("v3.sqlite"), model: try XCTUnwrap(set.models["v3"]))
        defer { migrated.close() }
        XCTAssertEqual(
            try fetchAll(migrated, "Item").map { try $0.value(forKey: "title").stringValue ?? "" }.sorted(), ["a", "b"])
    }

    func testWithoutAStoreToAskTheChainStepIsRefusedButTheDirectStepStillTaken() throws {
        let folder = try modelFolder([("v1", Self.item), ("v2", Self.itemWithKind), ("v3", Self.item)], current: "v3")
        let plan = try MigrationPlan(
            storePath: "x.sqlite", storeVersion: "v1", models: try ModelSet(contentsOf: folder))
        XCTAssertEqual(steps(plan), ["v1→v3"])
        XCTAssertTrue(
            plan.stages[0].reason.contains("'Item.kind' is non-optional and has no default value"),
            plan.stages[0].reason)
        XCTAssertTrue(
            plan.stages[0].reason.contains("Core Data would infer this step and refuse at save (validation error 1570"),
            plan.stages[0].reason)
    }

    func testWhenNeitherTheChainNorTheDirectStepCanBeInferredBothAreSaid() throws {
        // v3 keeps the non-optional attribute: v1 → v3 fails the same rule.
        let folder = try modelFolder(
            [("v1", Self.item), ("v2", Self.itemWithKind), ("v3", Self.itemWithKind)], current: "v3")
        XCTAssertThrowsError(
            try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: try ModelSet(contentsOf: folder))
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .inferredMappingModel)
            XCTAssertTrue(e?.message.hasPrefix("v1 → v2: no mapping model records these versions") ?? false, "\(error)")
            XCTAssertTrue(
                e?.message.contains(
                    "the step straight from 'v1' to 'v3', which Core Data's automatic migration would infer, cannot be inferred either"
                ) ?? false, "\(error)")
        }
    }

    func testAStoreAfterTheTargetInTheOrderTakesOneStepStraightToIt() throws {
        // The order cannot say which is newer for Core Data, which orders no versions: the
        // store's model is migrated straight to the target's.
        let folder = try modelFolder(
            [
                ("v1", Self.item),
                (
                    "v2",
                    #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "note", "type": "string"}]}"#
                ),
            ], current: "v2")
        let set = try ModelSet(contentsOf: folder)
        let store = scratch.file("v2.sqlite")
        try makeStore(store, try XCTUnwrap(set.models["v2"])) { s in
            try insert(s, "Item", ["title": "kept", "note": "dropped"])
        }
        let plan = try MigrationPlan(storeAt: store, models: set, targetVersion: "v1")
        XCTAssertEqual(steps(plan), ["v2→v1"])
        XCTAssertTrue(plan.stages[0].isDirect)
        XCTAssertTrue(
            plan.stages[0].reason.contains("puts the store's version 'v2' after the target 'v1'"), plan.stages[0].reason
        )
        XCTAssertTrue(
            plan.warnings.contains { $0.contains("the plan takes one step straight from 'v2' to 'v1'") },
            "\(plan.warnings)")
        try StagedMigrationManager(plan: plan).migrateStore(to: scratch.file("v1.sqlite"))
        let migrated = try PersistentStore.open(at: scratch.file("v1.sqlite"), model: try XCTUnwrap(set.models["v1"]))
        defer { migrated.close() }
        XCTAssertEqual(try fetchAll(migrated, "Item").map { try $0.value(forKey: "title").stringValue ?? "" }, ["kept"])
    }

    func testTheCommandLineSaysTheDirectStepInPlanMigrateAndCheck() throws {
        try CommandLineTool.requireBuilt()
        let folder = try modelFolder([("v1", Self.item), ("v2", Self.itemWithKind), ("v3", Self.item)], current: "v3")
        let stores = scratch.file("stores")
        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: true)
        let store = stores + "/v1.sqlite"
        try makeStore(store, try model("v1", Self.item)) { s in try insert(s, "Item", ["title": "a"]) }

        let plan = try CommandLineTool.run(["plan", store, "--models", folder])
        XCTAssertEqual(plan.status, 0, plan.err)
        XCTAssertTrue(plan.out.contains("1. v1 → v3: inferred directly"), plan.out)
        XCTAssertTrue(
            plan.err.contains("v1 → v2 cannot be inferred: the plan takes the inferred step v1 → v3 instead"), plan.err)
        let json = try CommandLineTool.run(["plan", store, "--models", folder, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let steps = try XCTUnwrap(object["steps"] as? [[String: Any]])
        XCTAssertEqual(steps.map { $0["direct"] as? Bool }, [true])
        XCTAssertTrue(object["directStep"] is NSNull, json.out)

        let migrate = try CommandLineTool.run([
            "migrate", store, "--models", folder, "--to", scratch.file("migrated.sqlite"), "--json",
        ])
        XCTAssertEqual(migrate.status, 0, migrate.err)
        let migrated = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(migrate.out.utf8)) as? [String: Any])
        XCTAssertEqual((migrated["steps"] as? [[String: Any]])?.map { $0["direct"] as? Bool }, [true], migrate.out)
        let check = try CommandLineTool.run(["check", stores, "--models", folder])
        XCTAssertEqual(check.status, 0, check.err)
        XCTAssertTrue(check.out.contains("v1 → v3 (inferred directly)"), check.out)

        // A plan of inferred steps shows Core Data's direct step beside them.
        let offered = try modelFolder(
            [("v1", Self.item), ("v2", Self.itemWithNote), ("v3", Self.item)], current: "v3", name: "offered")
        let alternative = try CommandLineTool.run(["plan", store, "--models", offered])
        XCTAssertEqual(alternative.status, 0, alternative.err)
        XCTAssertTrue(
            alternative.out.contains("or one step, as Core Data's automatic migration: v1 → v3 inferred directly"),
            alternative.out)
        let alternativeJSON = try CommandLineTool.run(["plan", store, "--models", offered, "--json"])
        let document = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(alternativeJSON.out.utf8)) as? [String: Any])
        let direct = try XCTUnwrap(document["directStep"] as? [String: Any], alternativeJSON.out)
        XCTAssertEqual(direct["from"] as? String, "v1")
        XCTAssertEqual(direct["to"] as? String, "v3")
        XCTAssertEqual(direct["inferable"] as? Bool, true)
    }

    static let itemWithNote =
        #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "note", "type": "string"}]}"#

    func testVersionNamesThatDoNotSayTheirOrderTakeTheDirectStep() throws {
        // Stepik's shape: versions named by feature ("Model_exams_v10", "Model_courselists_v21"),
        // so natural order is alphabetical. By name, the chain would turn a Double into an
        // Integer 64 and back, cutting 2.5 to 2; Core Data infers straight to the current version.
        func score(_ type: String) -> String {
            #"{"name": "Progress", "attributes": [{"name": "score", "type": "\#(type)"}]}"#
        }
        let folder = try modelFolder(
            [
                ("Model", score("double")), ("Model_alpha_v2", score("integer64")),
                ("Model_beta_v1", score("double")), ("Model_gamma_v3", score("double")),
            ], current: "Model_gamma_v3")
        let set = try ModelSet(contentsOf: folder)
        XCTAssertEqual(set.versionNames, ["Model", "Model_alpha_v2", "Model_beta_v1", "Model_gamma_v3"])
        let store = scratch.file("progress.sqlite")
        try makeStore(store, try XCTUnwrap(set.models["Model"])) { s in
            try insert(s, "Progress", ["score": .double(2.5)])
        }
        let plan = try MigrationPlan(storeAt: store, models: set)
        XCTAssertEqual(steps(plan), ["Model→Model_gamma_v3"])
        XCTAssertTrue(plan.stages[0].isDirect)
        XCTAssertTrue(
            plan.stages[0].reason.contains(
                "the version names do not say their order ('Model' and 'Model_alpha_v2' differ in more than their numbers)"
            ), plan.stages[0].reason)
        try StagedMigrationManager(plan: plan).migrateStore(to: scratch.file("progress-current.sqlite"))
        let migrated = try PersistentStore.open(
            at: scratch.file("progress-current.sqlite"), model: try XCTUnwrap(set.models["Model_gamma_v3"]))
        defer { migrated.close() }
        XCTAssertEqual(try fetchAll(migrated, "Progress").first?.value(forKey: "score").doubleValue, 2.5)

        // Names that differ only in their numbers keep the chain.
        XCTAssertNil(MigrationPlan.namesThatDoNotOrder(["Model", "Model 2", "Model_10", "model-11"]))
        XCTAssertNil(MigrationPlan.namesThatDoNotOrder(["v1.0.0", "v1.1.0", "v2.0.0"]))
    }

    // MARK: The direct step offered

    func testAPlanOfInferredStepsOffersCoreDatasDirectStep() throws {
        let v3 =
            #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "a", "type": "string"}, {"name": "b", "type": "integer32"}]}"#
        let folder = try modelFolder(
            [
                ("v1", Self.item),
                (
                    "v2",
                    #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "a", "type": "string"}]}"#
                ), ("v3", v3),
            ], current: "v3")
        let plan = try MigrationPlan(
            storePath: "x.sqlite", storeVersion: "v1", models: try ModelSet(contentsOf: folder))
        XCTAssertEqual(steps(plan), ["v1→v2", "v2→v3"])
        XCTAssertEqual(plan.stages.map { $0.isDirect }, [false, false])
        guard case .inferable(let stage)? = plan.directStep else {
            return XCTFail("\(String(describing: plan.directStep))")
        }
        XCTAssertEqual("\(stage.sourceVersionName)→\(stage.destinationVersionName)", "v1→v3")
        let direct = try plan.takingDirectStep()
        XCTAssertEqual(steps(direct), ["v1→v3"])
        XCTAssertTrue(direct.stages[0].isDirect)

        // The direct step fails where a change made along the way cannot be inferred in one go.
        let refusing = try modelFolder(
            [
                ("v1", #"{"name": "Item", "attributes": [{"name": "n", "type": "string"}]}"#),
                (
                    "v2",
                    #"{"name": "Item", "attributes": [{"name": "m", "type": "string", "renamingIdentifier": "n"}, {"name": "n", "type": "date"}]}"#
                ),
                (
                    "v3",
                    #"{"name": "Item", "attributes": [{"name": "m", "type": "string"}, {"name": "n", "type": "date"}]}"#
                ),
            ], current: "v3")
        let chained = try MigrationPlan(
            storePath: "x.sqlite", storeVersion: "v1", models: try ModelSet(contentsOf: refusing))
        XCTAssertEqual(steps(chained), ["v1→v2", "v2→v3"])
        guard case .notInferable(let step, let why)? = chained.directStep else {
            return XCTFail("\(String(describing: chained.directStep))")
        }
        XCTAssertEqual(step, ModelSet.Step("v1", "v3"))
        XCTAssertTrue(why.contains("changes type from string to date"), why)
        XCTAssertThrowsError(try chained.takingDirectStep()) {
            XCTAssertEqual(($0 as? MigrationError)?.code, .inferredMappingModel)
        }
    }

    // MARK: Non-optional judged by rows

    func testAnAttributeBecomingNonOptionalIsJudgedByTheStoresRows() throws {
        let folder = try modelFolder([("v1", Self.item), ("v2", Self.itemRequired)], current: "v2")
        let set = try ModelSet(contentsOf: folder)
        let full = scratch.file("full.sqlite")
        try makeStore(full, try XCTUnwrap(set.models["v1"])) { s in
            for t in ["a", "b", "c"] { try insert(s, "Item", ["title": .string(t)]) }
        }
        let plan = try MigrationPlan(storeAt: full, models: set)
        XCTAssertEqual(steps(plan), ["v1→v2"])
        XCTAssertTrue(
            plan.stages[0].reason.contains(
                "'Item.title' may be non-optional: every 'Item' instance of the store has a value for 'Item.title'"),
            plan.stages[0].reason)
        try StagedMigrationManager(plan: plan).migrateStore(to: scratch.file("full-v2.sqlite"))

        let holey = scratch.file("holey.sqlite")
        try makeStore(holey, try XCTUnwrap(set.models["v1"])) { s in
            try insert(s, "Item", ["title": "a"])
            try insert(s, "Item", [:])
            try insert(s, "Item", [:])
        }
        XCTAssertThrowsError(try MigrationPlan(storeAt: holey, models: set)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .inferredMappingModel)
            XCTAssertTrue(
                e?.message.contains("attribute 'Item.title' becomes non-optional without a default value") ?? false,
                "\(error)")
            XCTAssertTrue(
                e?.message.contains("2 'Item' instances of the store have no value for 'Item.title'") ?? false,
                "\(error)")
            XCTAssertTrue(e?.message.contains("validation error 1570") ?? false, "\(error)")
        }
        // Without a store, nothing can be judged: refused as before.
        XCTAssertThrowsError(try MigrationPlan(storePath: full, storeVersion: "v1", models: set))
    }

    func testALaterInferredStepIsJudgedByTheStoresRowsFollowedThroughTheStepsBefore() throws {
        // v2 renames title to name and adds an optional kind; v3 makes both non-optional.
        let v2 =
            #"{"name": "Item", "attributes": [{"name": "name", "type": "string", "renamingIdentifier": "title"}, {"name": "kind", "type": "string"}]}"#
        let v3 =
            #"{"name": "Item", "attributes": [{"name": "name", "type": "string", "optional": false}, {"name": "kind", "type": "string", "optional": false}]}"#
        let v3NameOnly =
            #"{"name": "Item", "attributes": [{"name": "name", "type": "string", "optional": false}, {"name": "kind", "type": "string"}]}"#
        let set = try ModelSet(
            contentsOf: try modelFolder([("v1", Self.item), ("v2", v2), ("v3", v3NameOnly)], current: "v3"))
        let full = scratch.file("full.sqlite")
        try makeStore(full, try XCTUnwrap(set.models["v1"])) { s in
            for t in ["a", "b"] { try insert(s, "Item", ["title": .string(t)]) }
        }
        let plan = try MigrationPlan(storeAt: full, models: set)
        XCTAssertEqual(
            steps(plan), ["v1→v2", "v2→v3"], "v2 → v3 is judged by the store's titles, which v1 → v2 carries into name")
        XCTAssertTrue(plan.stages[1].reason.contains("'Item.name' may be non-optional"), plan.stages[1].reason)
        try StagedMigrationManager(plan: plan).migrateStore(to: scratch.file("full-v3.sqlite"))

        let holey = scratch.file("holey.sqlite")
        try makeStore(holey, try XCTUnwrap(set.models["v1"])) { s in
            try insert(s, "Item", ["title": "a"])
            try insert(s, "Item", [:])
        }
        XCTAssertThrowsError(try MigrationPlan(storeAt: holey, models: set)) { error in
            XCTAssertTrue(
                "\(error)".contains("1 'Item' instance of the store has no value for 'Item.name'"), "\(error)")
        }

        // kind was added in v2 without a default: every instance lacks it by v3.
        let both = try ModelSet(
            contentsOf: try modelFolder([("v1", Self.item), ("v2", v2), ("v3", v3)], current: "v3", name: "both"))
        XCTAssertThrowsError(try MigrationPlan(storeAt: full, models: both)) { error in
            XCTAssertTrue("\(error)".contains("2 'Item' instances of the store have no value for it"), "\(error)")
        }
        let empty = scratch.file("empty.sqlite")
        try makeStore(empty, try XCTUnwrap(both.models["v1"])) { _ in }
        XCTAssertEqual(steps(try MigrationPlan(storeAt: empty, models: both)), ["v1→v2", "v2→v3"])
    }

    func testANewRequiredToOneIsJudgedByWhetherTheEntityHasRows() throws {
        // A new non-optional to-one (xDrip's shape): every existing instance would lack it.
        let v1 =
            #"{"name": "Sensor", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Peripheral", "attributes": [{"name": "address", "type": "string"}]}"#
        let v2 =
            #"{"name": "Sensor", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "peripheral", "destination": "Peripheral", "optional": false, "inverse": "sensor"}]}, {"name": "Peripheral", "attributes": [{"name": "address", "type": "string"}], "relationships": [{"name": "sensor", "destination": "Sensor", "inverse": "peripheral"}]}"#
        let folder = try modelFolder([("v1", v1), ("v2", v2)], current: "v2")
        let set = try ModelSet(contentsOf: folder)
        let empty = scratch.file("empty.sqlite")
        try makeStore(empty, try XCTUnwrap(set.models["v1"])) { s in try insert(s, "Peripheral", ["address": "x"]) }
        let plan = try MigrationPlan(storeAt: empty, models: set)
        XCTAssertTrue(plan.stages[0].reason.contains("the store has no 'Sensor' instance"), plan.stages[0].reason)
        try StagedMigrationManager(plan: plan).migrateStore(to: scratch.file("empty-v2.sqlite"))

        let used = scratch.file("used.sqlite")
        try makeStore(used, try XCTUnwrap(set.models["v1"])) { s in try insert(s, "Sensor", ["name": "G5"]) }
        XCTAssertThrowsError(try MigrationPlan(storeAt: used, models: set)) { error in
            XCTAssertTrue("\(error)".contains("new relationship 'Sensor.peripheral' is non-optional"), "\(error)")
            XCTAssertTrue("\(error)".contains("1 'Sensor' instance of the store has no value for it"), "\(error)")
        }
    }

    func testAToOneBecomingNonOptionalIsJudgedByItsForeignKeys() throws {
        let v1 =
            #"{"name": "Note", "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes"}]}, {"name": "Folder", "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]}"#
        let v2 =
            #"{"name": "Note", "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes", "optional": false}]}, {"name": "Folder", "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]}"#
        let set = try ModelSet(contentsOf: try modelFolder([("v1", v1), ("v2", v2)], current: "v2"))
        let store = scratch.file("notes.sqlite")
        try makeStore(store, try XCTUnwrap(set.models["v1"])) { s in
            let folder = try insert(s, "Folder", [:])
            try insert(s, "Note", ["folder": .object(folder)])
        }
        XCTAssertNoThrow(try MigrationPlan(storeAt: store, models: set))
        let loose = scratch.file("loose.sqlite")
        try makeStore(loose, try XCTUnwrap(set.models["v1"])) { s in try insert(s, "Note", [:]) }
        XCTAssertThrowsError(try MigrationPlan(storeAt: loose, models: set)) { error in
            XCTAssertTrue(
                "\(error)".contains("1 'Note' instance of the store has no value for 'Note.folder'"), "\(error)")
        }
    }

    // MARK: Shapes real projects ship

    func testANumericTypeChangeIsConvertedAsCoreDataConvertsNumbers() throws {
        // Integer 64 → Float (Stepik's shape), Double → Integer 32, Decimal → Double.
        let v1 = try model(
            "1",
            #"{"name": "E", "attributes": [{"name": "score", "type": "integer64"}, {"name": "ratio", "type": "double"}, {"name": "price", "type": "decimal"}]}"#
        )
        let v2 = try model(
            "2",
            #"{"name": "E", "attributes": [{"name": "score", "type": "float"}, {"name": "ratio", "type": "integer32"}, {"name": "price", "type": "double"}]}"#
        )
        let (mapping, notes) = try MappingModel.inferred(from: v1, to: v2, rows: nil)
        XCTAssertTrue(
            notes.contains { $0.contains("'E.score' changes type from integer64 to float") && $0.contains("rounded") },
            "\(notes)")
        XCTAssertTrue(
            notes.contains {
                $0.contains("'E.ratio' changes type from double to integer32") && $0.contains("fractions are cut")
            }, "\(notes)")
        for pushDown in [true, false] {
            let source = scratch.file("n\(pushDown).sqlite")
            let destination = scratch.file("n\(pushDown)-v2.sqlite")
            try makeStore(source, v1) { s in
                try insert(s, "E", ["score": .integer(1234), "ratio": .double(7.75), "price": .decimal("2.5")])
            }
            let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
            manager.pushDownSQL = pushDown
            try manager.migrateStore(from: source, to: destination)
            let store = try PersistentStore.open(at: destination, model: v2)
            defer { store.close() }
            let object = try XCTUnwrap(try fetchAll(store, "E").first)
            XCTAssertEqual(try object.value(forKey: "score").doubleValue, 1234.0, "push-down \(pushDown)")
            XCTAssertEqual(try object.value(forKey: "ratio").integerValue, 7, "push-down \(pushDown)")
            XCTAssertEqual(try object.value(forKey: "price").doubleValue, 2.5, "push-down \(pushDown)")
        }
    }

    func testABooleanAndANumberConvertAsCoreDataConvertsThemAndTextStaysRefused() throws {
        // Core Data's mapping model builder accepts a number becoming a Boolean and back.
        let v1 = try model(
            "1",
            #"{"name": "E", "attributes": [{"name": "flag", "type": "boolean"}, {"name": "count", "type": "integer32"}, {"name": "zero", "type": "double"}]}"#
        )
        let v2 = try model(
            "2",
            #"{"name": "E", "attributes": [{"name": "flag", "type": "integer16"}, {"name": "count", "type": "boolean"}, {"name": "zero", "type": "boolean"}]}"#
        )
        let (mapping, notes) = try MappingModel.inferred(from: v1, to: v2, rows: nil)
        XCTAssertTrue(
            notes.contains {
                $0.contains("'E.count' changes type from integer32 to boolean") && $0.contains("NO when it is zero")
            }, "\(notes)")
        XCTAssertFalse(notes.contains { $0.contains("'E.flag'") }, "Boolean → Integer 16 keeps every value: \(notes)")
        let source = scratch.file("b.sqlite")
        let destination = scratch.file("b-v2.sqlite")
        try makeStore(source, v1) { s in
            try insert(s, "E", ["flag": .bool(true), "count": .integer(5), "zero": .double(0)])
        }
        try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
            .migrateStore(from: source, to: destination)
        let store = try PersistentStore.open(at: destination, model: v2)
        defer { store.close() }
        let object = try XCTUnwrap(try fetchAll(store, "E").first)
        XCTAssertEqual(try object.value(forKey: "flag").integerValue, 1)
        XCTAssertEqual(try object.value(forKey: "count"), .bool(true))
        XCTAssertEqual(try object.value(forKey: "zero"), .bool(false))
        // A Boolean becoming text is refused, as Core Data refuses it.
        let v3 = try model("3", #"{"name": "E", "attributes": [{"name": "flag", "type": "string"}]}"#)
        XCTAssertThrowsError(try MappingModel.inferred(from: v1, to: v3, rows: nil)) { error in
            XCTAssertTrue("\(error)".contains("changes type from boolean to string"), "\(error)")
        }
    }

    func testAPropertyChangingKindStartsAfreshAsCoreDataMatchesKindWithKind() throws {
        // Mastodon's shape: a relationship becomes an attribute of the same name, and back.
        let v1 = try model(
            "1",
            #"{"name": "Status", "attributes": [{"name": "text", "type": "string"}, {"name": "tag", "type": "string"}], "relationships": [{"name": "author", "destination": "Account"}]}, {"name": "Account", "attributes": [{"name": "handle", "type": "string"}]}"#
        )
        let v2 = try model(
            "2",
            #"{"name": "Status", "attributes": [{"name": "text", "type": "string"}, {"name": "author", "type": "string"}], "relationships": [{"name": "tag", "destination": "Account"}]}, {"name": "Account", "attributes": [{"name": "handle", "type": "string"}]}"#
        )
        let (mapping, notes) = try MappingModel.inferred(from: v1, to: v2, rows: nil)
        XCTAssertTrue(
            notes.contains { $0.contains("'Status.author' was a relationship of 'Status' and is now an attribute") },
            "\(notes)")
        XCTAssertTrue(
            notes.contains { $0.contains("'Status.tag' was an attribute of 'Status' and is now a relationship") },
            "\(notes)")
        let source = scratch.file("kind.sqlite")
        let destination = scratch.file("kind-v2.sqlite")
        try makeStore(source, v1) { s in
            let account = try insert(s, "Account", ["handle": "@a"])
            try insert(s, "Status", ["text": "hi", "tag": "t", "author": .object(account)])
        }
        try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping).migrateStore(
            from: source, to: destination)
        let store = try PersistentStore.open(at: destination, model: v2)
        defer { store.close() }
        let status = try XCTUnwrap(try fetchAll(store, "Status").first)
        XCTAssertEqual(try status.value(forKey: "text").stringValue, "hi")
        XCTAssertTrue(try status.value(forKey: "author").isNull)
        XCTAssertTrue(try status.value(forKey: "tag").isNull)
        XCTAssertEqual(try fetchAll(store, "Account").count, 1)
    }

    func testARelationshipWhoseDestinationEntityIsRemovedOrReplacedStartsEmpty() throws {
        // WooCommerce's shape (the destination entity replaced by a new one) and Mastodon's (removed).
        let v1 = try model(
            "1",
            #"{"name": "Order", "attributes": [{"name": "number", "type": "integer32"}], "relationships": [{"name": "meta", "destination": "OrderMetaData", "toMany": true, "inverse": "order"}, {"name": "card", "destination": "Card", "inverse": "order"}]}, {"name": "OrderMetaData", "attributes": [{"name": "key", "type": "string"}], "relationships": [{"name": "order", "destination": "Order", "inverse": "meta"}]}, {"name": "Card", "relationships": [{"name": "order", "destination": "Order", "inverse": "card"}]}"#
        )
        let v2 = try model(
            "2",
            #"{"name": "Order", "attributes": [{"name": "number", "type": "integer32"}], "relationships": [{"name": "meta", "destination": "MetaData", "toMany": true, "inverse": "order"}, {"name": "card", "destination": "Payment"}]}, {"name": "MetaData", "attributes": [{"name": "key", "type": "string"}], "relationships": [{"name": "order", "destination": "Order", "inverse": "meta"}]}, {"name": "Payment"}"#
        )
        let (mapping, notes) = try MappingModel.inferred(from: v1, to: v2, rows: nil)
        XCTAssertTrue(
            notes.contains {
                $0.contains("'Order.meta' continues 'Order.meta', whose destination entity 'OrderMetaData' is removed")
            }, "\(notes)")
        XCTAssertTrue(
            notes.contains {
                $0.contains("'Order.card' continues 'Order.card', whose destination entity 'Card' is removed")
            }, "\(notes)")
        let source = scratch.file("orders.sqlite")
        let destination = scratch.file("orders-v2.sqlite")
        try makeStore(source, v1) { s in
            let order = try insert(s, "Order", ["number": .integer(7)])
            try insert(s, "OrderMetaData", ["key": "k", "order": .object(order)])
            try insert(s, "Card", ["order": .object(order)])
        }
        try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping).migrateStore(
            from: source, to: destination)
        let store = try PersistentStore.open(at: destination, model: v2)
        defer { store.close() }
        let order = try XCTUnwrap(try fetchAll(store, "Order").first)
        XCTAssertEqual(try order.value(forKey: "number").integerValue, 7)
        XCTAssertEqual(try order.value(forKey: "meta").elements.count, 0)
        XCTAssertTrue(try order.value(forKey: "card").isNull)

        // Non-optional, it is judged by the rows: every existing order would lose it.
        let required = try model(
            "3",
            #"{"name": "Order", "attributes": [{"name": "number", "type": "integer32"}], "relationships": [{"name": "card", "destination": "Payment", "optional": false}]}, {"name": "Payment"}"#
        )
        XCTAssertThrowsError(try MappingModel.inferred(from: v1, to: required)) { error in
            XCTAssertTrue(
                "\(error)".contains(
                    "whose destination entity 'Card' has no counterpart in the destination model, so it starts empty"),
                "\(error)")
        }
        XCTAssertNoThrow(try MappingModel.inferred(from: v1, to: required, rows: { _, _ in 0 }))
    }
    // MARK: Judged through a step with a mapping model

    /// v1 → v2 by a mapping model copying `Item` with `$source.title` (Xcode's form) and leaving
    /// `Note` unmapped; v2 → v3 inferred, making `Item.title` non-optional and adding a
    /// non-optional `Note.body` without a default.
    func mappedThenInferredSet() throws -> String {
        let note = #"{"name": "Note", "attributes": [{"name": "text", "type": "string"}]}"#
        let noteWithBody =
            #"{"name": "Note", "attributes": [{"name": "text", "type": "string"}, {"name": "body", "type": "string", "optional": false}]}"#
        let folder = try modelFolder(
            [
                ("v1", Self.item + ", " + note), ("v2", Self.item + ", " + note),
                ("v3", Self.itemRequired + ", " + noteWithBody),
            ],
            current: "v3")
        try #"""
        {"sourceModel": "v1", "destinationModel": "v2", "entityMappings": [
          {"name": "ItemToItem", "type": "copy", "sourceEntity": "Item", "destinationEntity": "Item",
           "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Item\", \"TRUEPREDICATE\"), $manager.sourceContext, NO)",
           "attributeMappings": [{"name": "title", "valueExpression": "$source.title"}]}
        ]}
        """#.write(toFile: folder + "/v1-v2.mapping.json", atomically: true, encoding: .utf8)
        return folder
    }

    func testALaterStepIsJudgedByTheStoreRowsThroughAStepWithAMappingModel() throws {
        let set = try ModelSet(contentsOf: try mappedThenInferredSet())
        let v1 = try XCTUnwrap(set.models["v1"])
        // Every item has a title, and the mapping model makes no notes: v2 → v3 can be taken.
        let full = scratch.file("full.sqlite")
        try makeStore(full, v1) { s in
            for title in ["a", "b"] { try insert(s, "Item", ["title": .string(title)]) }
            try insert(s, "Note", ["text": .string("dropped by the mapping model")])
        }
        let plan = try MigrationPlan(storeAt: full, models: set)
        XCTAssertEqual(steps(plan), ["v1→v2", "v2→v3"])
        let reason = plan.stages[1].reason
        XCTAssertTrue(reason.contains("every 'Item' instance of the store has a value for 'Item.title'"), reason)
        XCTAssertTrue(reason.contains("the store has no 'Note' instance"), reason)
        // An item without a title: refused, counted through the mapping model's copy.
        let lacking = scratch.file("lacking.sqlite")
        try makeStore(lacking, v1) { s in
            try insert(s, "Item", ["title": .string("a")])
            _ = try insert(s, "Item", [:])
        }
        XCTAssertThrowsError(try MigrationPlan(storeAt: lacking, models: set)) { error in
            XCTAssertTrue(
                "\(error)".contains("1 'Item' instance of the store has no value for 'Item.title'"), "\(error)")
        }
    }

    func testAMappingModelWithAPolicyOrAFilterLosesTheTrail() throws {
        let folder = try mappedThenInferredSet()
        let path = folder + "/v1-v2.mapping.json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let set = try ModelSet(contentsOf: folder)
        let store = scratch.file("full.sqlite")
        try makeStore(store, try XCTUnwrap(set.models["v1"])) { s in try insert(s, "Item", ["title": .string("a")]) }
        for changed in [
            text.replacingOccurrences(of: #""type": "copy","#, with: #""type": "custom", "policy": "AppPolicy","#),
            text.replacingOccurrences(of: "TRUEPREDICATE", with: "title != 'x'"),
            text.replacingOccurrences(of: "$source.title", with: "$source.title.uppercaseString"),
        ] {
            try changed.write(toFile: path, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try MigrationPlan(storeAt: store, models: try ModelSet(contentsOf: folder))) { error in
                XCTAssertTrue(
                    "\(error)".contains("so only a store in which none lacks it migrates"), "\(changed): \(error)")
            }
        }
    }

    // MARK: Warnings

    /// A model's own warning is said once, at the first step that reads it, not again as the next
    /// step's source.
    func testAModelsWarningIsSaidOnceAlongAChain() throws {
        let contact =
            #"{"name": "Contact", "fetchIndexes": [{"name": "byChats", "elements": [{"property": "chats"}]}], "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "chats", "destination": "Chat", "inverse": "contact", "toMany": true}]}, {"name": "Chat", "relationships": [{"name": "contact", "destination": "Contact", "inverse": "chats"}]}"#
        let folder = try modelFolder(
            [
                ("v1", Self.item), ("v2", Self.item + ", " + contact),
                (
                    "v3",
                    Self.itemWithKind.replacingOccurrences(of: #""optional": false"#, with: #""optional": true"#) + ", "
                        + contact
                ),
            ],
            current: "v3")
        let plan = try MigrationPlan(
            storePath: "x.sqlite", storeVersion: "v1", models: try ModelSet(contentsOf: folder))
        XCTAssertEqual(steps(plan), ["v1→v2", "v2→v3"])
        let all = try plan.allWarnings()
        let warnings = all.filter { $0.contains("fetch index 'Contact.byChats'") }
        XCTAssertEqual(warnings.count, 1, "\(all)")
        XCTAssertTrue(warnings.first?.hasPrefix("v1 → v2: destination model 'M': ") ?? false, "\(warnings)")
    }
}
