import Foundation
import XCTest

@testable import CDMigrate

/// The loss report: what a migration did not carry, counted per entity and property, declared
/// intended by the mapping or not, and the strict mode that refuses to hand over a store that lost
/// what its mapping does not declare.
final class LossReportTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    func models() throws -> (ManagedObjectModel, ManagedObjectModel) {
        (try ManagedObjectModel(json: LossReportFixtures.v1), try ManagedObjectModel(json: LossReportFixtures.v2))
    }

    /// The v1 → v2 mapping with `post` replacing PostToPost's members after its name, and `extra`
    /// appended to the entity mappings.
    func mapping(
        post: String =
            #""attributeMappings": {"title": "$source.title", "color": "$source.color"}, "relationshipMappings": {"folder": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.folder)"}"#,
        folder: String = #""attributeMappings": {"name": "$source.name"}"#, folderPredicate: String = "TRUEPREDICATE",
        postPredicate: String = "TRUEPREDICATE", extra: String = ""
    ) throws -> MappingModel {
        try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "\(folderPredicate)", \(folder)},
                  {"name": "PostToPost", "sourceEntity": "Post", "destinationEntity": "Post", "predicate": "\(postPredicate)", \(post)}\(extra)
                ]}
                """)
    }

    func run(
        _ mapping: MappingModel, posts: Int = 7, strict: Bool = false, configure: (MigrationManager) -> Void = { _ in }
    ) throws -> MigrationReport {
        let (source, destination) = try models()
        let path = scratch.file("blog.sqlite")
        if !FileManager.default.fileExists(atPath: path) { try LossReportFixtures.store(at: path, posts: posts) }
        let manager = try MigrationManager(sourceModel: source, destinationModel: destination, mappingModel: mapping)
        manager.failsOnUnintendedLoss = strict
        configure(manager)
        let out = scratch.file("out-\(UUID().uuidString).sqlite")
        return try manager.migrateStore(from: path, to: out)
    }

    func lines(_ report: MigrationReport) -> [String] {
        report.losses.losses.map {
            "\($0.kind.rawValue) \($0.entityName)\($0.propertyName.map { "." + $0 } ?? "") \($0.count)\($0.isIntended ? " intended" : "")"
        }
    }

    func testAMappingThatCarriesEverythingReportsNoLoss() throws {
        let report = try run(try mapping())
        XCTAssertEqual(lines(report), [])
    }

    func testTheSamePathsWithoutSQLReportTheSame() throws {
        // Row by row (no SQL push-down): the same counts, the nil comparison included.
        XCTAssertEqual(lines(try run(try mapping(), configure: { $0.pushDownSQL = false })), [])
        let dropped = try mapping(post: #""attributeMappings": {"title": "$source.title"}"#)
        XCTAssertEqual(
            lines(try run(dropped, configure: { $0.pushDownSQL = false })),
            ["relationship Folder.posts 7", "attribute Post.color 7", "relationship Post.folder 7"])
    }

    func testAnAttributeNoMappingReadsIsCountedByItsValues() throws {
        let report = try run(
            try mapping(
                post:
                    #""attributeMappings": {"title": "$source.title"}, "relationshipMappings": {"folder": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.folder)"}"#
            ))
        XCTAssertEqual(lines(report), ["attribute Post.color 7"])
        let loss = try XCTUnwrap(report.losses.losses.first)
        XCTAssertEqual(loss.entityMappingName, "PostToPost")
        XCTAssertEqual(loss.pass, 0)
        XCTAssertEqual(report.losses.unintended.count, 1)
    }

    func testNilValuesAreNotLost() throws {
        let (source, destination) = try models()
        let path = scratch.file("blog.sqlite")
        try makeStore(path, source) { store in
            try insert(store, "Post", ["title": .string("with"), "color": .string("red")])
            try insert(store, "Post", ["title": .string("without")])
        }
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination,
            mappingModel: try mapping(post: #""attributeMappings": {"title": "$source.title"}"#))
        let report = try manager.migrateStore(from: path, to: scratch.file("out.sqlite"))
        XCTAssertEqual(lines(report), ["attribute Post.color 1"], "only the post with a color loses one")
    }

    func testTheEntityMappingsUserInfoDeclaresAnIntendedLoss() throws {
        let post =
            #""attributeMappings": {"title": "$source.title"}, "userInfo": {"cdmigrate.intendedLosses": "color, folder"}"#
        // Folder.posts (the other side of Post.folder) is declared by neither mapping: still a loss.
        XCTAssertThrowsError(try run(try mapping(post: post), strict: true))
        let folder = #""attributeMappings": {"name": "$source.name"}, "userInfo": {"cdmigrate.intendedLosses": "*"}"#
        let report = try run(try mapping(post: post, folder: folder), strict: true)
        XCTAssertEqual(
            lines(report),
            [
                "relationship Folder.posts 7 intended", "attribute Post.color 7 intended",
                "relationship Post.folder 7 intended",
            ])
        XCTAssertEqual(report.losses.unintended, [])
    }

    func testARelationshipIsCarriedWhenEitherSideIsMapped() throws {
        // Folder.posts is not mapped, but Post.folder is: the links arrive through the inverse.
        XCTAssertFalse(lines(try run(try mapping())).contains { $0.contains("Folder.posts") })
        // Neither side: both are reported, each with its links.
        let report = try run(
            try mapping(post: #""attributeMappings": {"title": "$source.title", "color": "$source.color"}"#))
        XCTAssertEqual(lines(report), ["relationship Folder.posts 7", "relationship Post.folder 7"])
    }

    func testInstancesNoEntityMappingTookAreReportedAndARemoveMappingDeclaresThem() throws {
        let onlyPosts = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PostToPost", "sourceEntity": "Post", "destinationEntity": "Post", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"title": "$source.title", "color": "$source.color"}}]}
                """)
        let report = try run(onlyPosts)
        XCTAssertEqual(lines(report), ["relationship Post.folder 7", "instances Folder 2"])
        let removing = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PostToPost", "sourceEntity": "Post", "destinationEntity": "Post", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"title": "$source.title", "color": "$source.color"}, "userInfo": {"cdmigrate.intendedLosses": "folder"}},
                  {"name": "RemoveFolder", "type": "remove", "sourceEntity": "Folder"}]}
                """)
        let declared = try run(removing, strict: true)
        XCTAssertEqual(lines(declared), ["relationship Post.folder 7 intended", "instances Folder 2 intended"])
    }

    func testAToManyThatCameOutShorterIsCountedByItsMissingLinks() throws {
        // Folder.posts mapped from the same key, but the post mapping leaves the posts with a blue color behind.
        let folder =
            #""attributeMappings": {"name": "$source.name"}, "relationshipMappings": {"posts": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PostToPost\", $source.posts)"}"#
        let post = #""attributeMappings": {"title": "$source.title", "color": "$source.color"}"#
        for pushDown in [true, false] {
            let report = try run(
                try mapping(post: post, folder: folder, postPredicate: "color == 'red'"),
                configure: { $0.pushDownSQL = pushDown })
            // 7 posts: 4 red (taken), 3 blue (left behind by the predicate, which declares them).
            XCTAssertEqual(
                lines(report), ["toMany Folder.posts 3", "instances Post 3 intended"], "push-down \(pushDown)")
        }
    }

    /// Moves two of Folder 1's posts into Folder 0 once the folders' relationships are made.
    final class MovingPolicy: EntityMigrationPolicy {
        override func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            guard let store = manager.destinationStore else { return }
            let folders = try fetchAll(store, "Folder")
            guard let zero = folders.first(where: { (try? $0.value(forKey: "name")) == .string("Folder 0") }),
                let one = folders.first(where: { (try? $0.value(forKey: "name")) == .string("Folder 1") }),
                case .collection(let posts) = try one.value(forKey: "posts")
            else { return }
            for case .object(let post) in posts.prefix(2) { try post.setValue(.object(zero), forKey: "folder") }
        }
    }

    /// A to-many is compared instance by instance: Folder 1 coming out two posts short is a loss
    /// although Folder 0 gained them and the total number of links is the same.
    func testAToManyShorterForOneInstanceIsCountedAlthoughAnotherGained() throws {
        let folder =
            #""policy": "MovingPolicy", "attributeMappings": {"name": "$source.name"}, "relationshipMappings": {"posts": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PostToPost\", $source.posts)"}"#
        let post = #""attributeMappings": {"title": "$source.title", "color": "$source.color"}"#
        let report = try run(
            try mapping(post: post, folder: folder),
            configure: { $0.registerPolicy(named: "MovingPolicy") { MovingPolicy() } })
        // 7 posts: Folder 0 has 4 in the source and 6 in the destination, Folder 1 has 3 and 1.
        XCTAssertEqual(lines(report), ["toMany Folder.posts 2"])
    }

    /// Clears `title` after the default policy made the instance.
    final class ClearingPolicy: EntityMigrationPolicy {
        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            guard let made = try defaultCreateDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
            else { return }
            if case .string(let title) = try sInstance.value(forKey: "title"), title.hasSuffix("1") {
                try made.setValue(.null, forKey: "title")
            }
        }
    }

    func testAValueThatCameOutNilFromTheSameKeyIsCounted() throws {
        let post =
            #""policy": "ClearingPolicy", "attributeMappings": {"title": "$source.title", "color": "$source.color"}, "relationshipMappings": {"folder": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.folder)"}"#
        let report = try run(
            try mapping(post: post), posts: 12,
            configure: { $0.registerPolicy(named: "ClearingPolicy") { ClearingPolicy() } })
        XCTAssertEqual(lines(report), ["nilled Post.title 2"], "Post 1 and Post 11")
    }

    /// A batch hook: the default as SQL for the batch, then the first instance's title cleared.
    final class ClearingBatchPolicy: EntityMigrationPolicy {
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            let made = try batch.applyDefault()
            guard let first = made.first, let destination = manager.destinationStore else { return }
            try destination.fault(entity: try destination.entity(named: "Post"), primaryKey: first).setValue(
                .null, forKey: "title")
        }
    }

    /// The batch default writes by SQL (verbatim copies), but a value the hook then clears is counted.
    func testAValueABatchHookClearedAfterTheSQLDefaultIsCounted() throws {
        let post =
            #""policy": "ClearingBatchPolicy", "attributeMappings": {"title": "$source.title", "color": "$source.color"}, "relationshipMappings": {"folder": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.folder)"}"#
        let report = try run(
            try mapping(post: post), posts: 5,
            configure: { $0.registerPolicy(named: "ClearingBatchPolicy") { ClearingBatchPolicy() } })
        XCTAssertEqual(lines(report), ["nilled Post.title 1"])
    }

    func testStrictRefusesAnUnintendedLossAndWritesNothing() throws {
        let (source, destination) = try models()
        let path = scratch.file("blog.sqlite")
        try LossReportFixtures.store(at: path, posts: 3)
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination,
            mappingModel: try mapping(
                post:
                    #""attributeMappings": {"title": "$source.title"}, "relationshipMappings": {"folder": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.folder)"}"#
            ))
        manager.failsOnUnintendedLoss = true
        let out = scratch.file("out.sqlite")
        XCTAssertThrowsError(try manager.migrateStore(from: path, to: out)) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .migration)
            XCTAssertTrue(
                error?.message.contains(
                    "Post.color: 3 values that no property mapping reads (entity mapping 'PostToPost')") == true,
                error?.message ?? "")
            XCTAssertTrue(error?.message.contains("nothing was written") == true)
        }
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted(), ["blog.sqlite"],
            "nothing beside the source")
        // In place: the store stays as it was.
        let before = fileBytes(path)
        XCTAssertThrowsError(try manager.migrateStoreInPlace(at: path))
        XCTAssertEqual(fileBytes(path), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted(), ["blog.sqlite"])
    }

    func testADeclarationNamingNoSourcePropertyIsRefused() throws {
        let (source, destination) = try models()
        let bad = try mapping(
            post:
                #""attributeMappings": {"title": "$source.title"}, "userInfo": {"cdmigrate.intendedLosses": "colour"}"#)
        XCTAssertThrowsError(
            try MigrationManager(sourceModel: source, destinationModel: destination, mappingModel: bad)
        ) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .invalidMapping)
            XCTAssertTrue(
                "\(error?.underlying.map { $0.message } ?? []) \(error?.message ?? "")".contains(
                    "names 'colour', which source entity 'Post' does not have"), "\(String(describing: error))")
        }
        let notText = try mapping(
            post: #""attributeMappings": {"title": "$source.title"}, "userInfo": {"cdmigrate.intendedLosses": 3}"#)
        XCTAssertThrowsError(
            try MigrationManager(sourceModel: source, destinationModel: destination, mappingModel: notText))
    }

    // MARK: The chain seen in real use

    /// One mapping model of a chain was missing: the inferred step that replaced it dropped
    /// `Post.color` for 1,001 posts. The step's report says so, and a strict run fails before the
    /// hand-over, leaving nothing at the destination.
    func testAChainsInferredStepThatDropsAnAttributeIsReportedAndStrictFails() throws {
        let folder = try LossReportFixtures.chainFolder(in: scratch.path)
        let store = scratch.file("blog.sqlite")
        try LossReportFixtures.store(at: store)
        let set = try ModelSet(contentsOf: folder)
        let manager = try StagedMigrationManager(storeAt: store, models: set)
        XCTAssertEqual(manager.plan.stages.map { $0.isInferred }, [false, true])
        let report = try manager.migrateStore(to: scratch.file("out.sqlite"))
        XCTAssertEqual(lines(report.stages[0].report), [])
        XCTAssertEqual(lines(report.stages[1].report), ["attribute Post.color 1001"])
        XCTAssertEqual(report.stages[1].report.losses.losses.first?.entityMappingName, "IEM_Transform_Post")

        let strict = try StagedMigrationManager(storeAt: store, models: set)
        strict.failsOnUnintendedLoss = true
        let out = scratch.file("strict.sqlite")
        XCTAssertThrowsError(try strict.migrateStore(to: out)) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(message.hasPrefix("v2 → v3 (inferred): "), message)
            XCTAssertTrue(message.contains("Post.color: 1001 values that no property mapping reads"), message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted(),
            ["blog.sqlite", "models", "out.sqlite"])
    }

    func testTheReportsJSONHasTheDocumentedKeys() throws {
        let report = try run(
            try mapping(
                post:
                    #""attributeMappings": {"title": "$source.title"}, "userInfo": {"cdmigrate.intendedLosses": "folder"}"#
            ))
        XCTAssertEqual(
            report.losses.json.serialized(),
            #"[{"kind":"relationship","entity":"Folder","property":"posts","entityMapping":"FolderToFolder","pass":0,"count":7,"intended":false},{"kind":"attribute","entity":"Post","property":"color","entityMapping":"PostToPost","pass":0,"count":7,"intended":false},{"kind":"relationship","entity":"Post","property":"folder","entityMapping":"PostToPost","pass":0,"count":7,"intended":true}]"#
        )
        XCTAssertEqual(
            Set(LossReport.Kind.allCases.map { $0.rawValue }),
            ["attribute", "instances", "relationship", "toMany", "nilled", "externalData"])
    }
}
