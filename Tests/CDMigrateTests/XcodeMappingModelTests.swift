import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// Xcode's `.xcmappingmodel` read and compiled as Xcode's mapping model compiler does: checked
/// against the `.cdm` Xcode compiled from the same source (XcodeServer), against the hand-written
/// JSON of reference migration 4 (UnCloudNotes), and by running a migration with it.
final class XcodeMappingModelTests: XCTestCase {
    static let uncloudNotes = TestPaths.fixtures + "/xcode/UnCloudNotes/"
    static let xcodeServer = TestPaths.fixtures + "/xcode/XcodeServer/"

    var directory = ""
    override func setUpWithError() throws { directory = try TemporaryDirectory.make(prefix: "cdmigrate-xcmapping") }
    override func tearDown() { TemporaryDirectory.remove(directory) }

    func uncloudMapping(_ from: Int) -> String {
        Self.uncloudNotes + "UnCloudNotesMappingModel_v\(from)_to_v\(from + 1).xcmappingmodel"
    }

    func importedUnCloudNotes(from version: Int) throws -> MappingModel {
        try MappingModel(
            contentsOf: uncloudMapping(version), sourceModel: try UnCloudNotes.model(version: version),
            destinationModel: try UnCloudNotes.model(version: version + 1))
    }

    /// An entity mapping as one comparable line per part.
    func summary(_ m: EntityMapping) -> [String] {
        var lines = [
            "\(m.name) \(m.mappingType.rawValue) \(m.sourceEntityName ?? "-") -> \(m.destinationEntityName ?? "-") policy=\(m.entityMigrationPolicyClassName ?? "-")",
            "  source: \(m.sourceExpression.map { "\($0.entityName ?? "-") where \($0.predicate)" } ?? "-")",
        ]
        for p in m.attributeMappings { lines.append("  attribute \(p.name) = \(p.valueExpressionText ?? "-")") }
        for p in m.relationshipMappings { lines.append("  relationship \(p.name) = \(p.valueExpressionText ?? "-")") }
        return lines
    }

    // MARK: XcodeServer: the same mapping as Xcode compiled it

    /// The `.cdm` Xcode compiled from the same `.xcmappingmodel`, summarised by scripts/cdm_summary.py.
    func compiledSummary(_ version: String) throws -> [JSON] {
        try XCTUnwrap(JSON.load(path: Self.xcodeServer + version + "/MappingModel.compiled-summary.json").arrayValue)
    }

    func pairs(_ json: JSON?) -> [[String?]] {
        (json?.arrayValue ?? []).map { ($0.arrayValue ?? []).map { $0.stringValue } }
    }

    func testXcodeServer2_0_0ReadsExactlyWhatXcodeCompiled() throws {
        // Every relationship mapping of 2_0_0 names its entity mapping (sourcemappingname), so the
        // whole mapping compiles without the models.
        let mapping = try XcodeMappingModelReader.read(
            path: Self.xcodeServer + "2_0_0/MappingModel.xcmappingmodel", sourceModel: nil, destinationModel: nil)
        let compiled = try compiledSummary("2_0_0")
        XCTAssertEqual(mapping.name, "MappingModel")
        XCTAssertEqual(mapping.entityMappings.count, 23)
        XCTAssertEqual(mapping.entityMappings.count, compiled.count)
        for (m, c) in zip(mapping.entityMappings, compiled) {
            XCTAssertEqual(m.name, c["name"]?.stringValue)
            XCTAssertEqual(m.mappingType.rawValue, c["type"]?.stringValue, m.name)
            XCTAssertEqual(m.mappingType, .transform, m.name)
            XCTAssertEqual(m.sourceEntityName, c["sourceEntity"]?.stringValue)
            XCTAssertEqual(m.destinationEntityName, c["destinationEntity"]?.stringValue)
            XCTAssertEqual(m.entityMigrationPolicyClassName, c["policy"]?.stringValue)
            XCTAssertEqual(m.sourceExpressionText, c["sourceExpression"]?.stringValue, m.name)
            XCTAssertEqual(
                m.attributeMappings.map { [$0.name, $0.valueExpressionText] }, pairs(c["attributeMappings"]), m.name)
            XCTAssertEqual(
                m.relationshipMappings.map { [$0.name, $0.valueExpressionText] }, pairs(c["relationshipMappings"]),
                m.name)
        }
        XCTAssertEqual(mapping.entityMappings.reduce(0) { $0 + $1.attributeMappings.count }, 162)
        XCTAssertEqual(mapping.entityMappings.reduce(0) { $0 + $1.relationshipMappings.count }, 108)
        XCTAssertEqual(mapping.warnings, [])
    }

    func testXcodeServer1_1_0MatchesXcodeCompiledExceptRelationshipsThatNeedTheModels() throws {
        let mapping = try XcodeMappingModelReader.read(
            path: Self.xcodeServer + "1_1_0/MappingModel.xcmappingmodel/xcmapping.xml", sourceModel: nil,
            destinationModel: nil)
        let compiled = try compiledSummary("1_1_0")
        XCTAssertEqual(mapping.entityMappings.map { $0.name }, compiled.map { $0["name"]?.stringValue ?? "" })
        XCTAssertEqual(mapping.entityMappings.first?.name, "PlatformToPlatform")
        XCTAssertEqual(mapping.entityMappings.last?.name, "ConfigurationToConfiguration")
        for (m, c) in zip(mapping.entityMappings, compiled) {
            // Same entity names: a copy, although IntegrationIssues and Issue changed their version hash.
            XCTAssertEqual(m.mappingType, .copy, m.name)
            XCTAssertEqual(m.mappingType.rawValue, c["type"]?.stringValue, m.name)
            XCTAssertEqual(m.sourceExpressionText, c["sourceExpression"]?.stringValue, m.name)
            XCTAssertEqual(
                m.attributeMappings.map { [$0.name, $0.valueExpressionText] }, pairs(c["attributeMappings"]), m.name)
            // 1_1_0 does not store which entity mapping a relationship uses: Xcode's compiler finds it
            // in the models (which need the .xcdatamodel reader); the names and order still match.
            XCTAssertEqual(
                m.relationshipMappings.map { $0.name }, pairs(c["relationshipMappings"]).map { $0[0] ?? "" }, m.name)
            XCTAssertTrue(m.relationshipMappings.allSatisfy { $0.valueExpressionText == nil }, m.name)
        }
    }

    /// The entities, attribute names and relationship targets of an Xcode model (`.xcdatamodel/contents`),
    /// every attribute typed as a string: all the mapping compiler looks at. (Reading Xcode models
    /// in full is the model reader's job; this skeleton only feeds the mapping tests.)
    func skeletonModel(_ version: String) throws -> ManagedObjectModel {
        let root = try XMLElement.parse(
            file: Self.xcodeServer + version + "/XcodeServer.xcdatamodeld/XcodeServer.xcdatamodel/contents")
        let entities = root.children(named: "entity").map { entity in
            EntityDescription(
                name: entity["name"] ?? "", parent: entity["parentEntity"], isAbstract: entity["isAbstract"] == "YES",
                attributes: entity.children(named: "attribute").map {
                    AttributeDescription(name: $0["name"] ?? "", type: .string)
                },
                relationships: entity.children(named: "relationship").map {
                    RelationshipDescription(
                        name: $0["name"] ?? "", destination: $0["destinationEntity"] ?? "", inverse: $0["inverseName"],
                        isToMany: $0["toMany"] == "YES", isOrdered: $0["ordered"] == "YES")
                })
        }
        return try ManagedObjectModel(name: "XcodeServer " + version, entities: entities)
    }

    func testXcodeServer1_1_0WithItsModelsIsExactlyWhatXcodeCompiled() throws {
        // Here the relationship mappings name no entity mapping: it is found in the models, from the
        // source relationship's target to the destination relationship's target.
        let source = try skeletonModel("1_0_0")
        let destination = try skeletonModel("1_1_0")
        let mapping = try XcodeMappingModelReader.read(
            path: Self.xcodeServer + "1_1_0/MappingModel.xcmappingmodel", sourceModel: source,
            destinationModel: destination)
        try mapping.validate(sourceModel: source, destinationModel: destination)
        let compiled = try compiledSummary("1_1_0")
        XCTAssertEqual(mapping.entityMappings.count, compiled.count)
        var relationshipExpressions = 0
        for (m, c) in zip(mapping.entityMappings, compiled) {
            XCTAssertEqual(m.name, c["name"]?.stringValue)
            XCTAssertEqual(m.mappingType.rawValue, c["type"]?.stringValue, m.name)
            XCTAssertEqual(m.sourceExpressionText, c["sourceExpression"]?.stringValue, m.name)
            XCTAssertEqual(
                m.attributeMappings.map { [$0.name, $0.valueExpressionText] }, pairs(c["attributeMappings"]), m.name)
            XCTAssertEqual(
                m.relationshipMappings.map { [$0.name, $0.valueExpressionText] }, pairs(c["relationshipMappings"]),
                m.name)
            relationshipExpressions += m.relationshipMappings.filter { $0.valueExpressionText != nil }.count
        }
        // triggerErrors and inverseTriggerErrors are new in 1_1_0: no source relationship, no expression.
        XCTAssertEqual(relationshipExpressions, 106)
        XCTAssertNil(
            mapping.entityMapping(named: "IssueToIssue")?.relationshipMapping(named: "inverseTriggerErrors")?
                .valueExpressionText)
    }

    // MARK: UnCloudNotes: the course's mapping models against reference migration 4's models

    func testUnCloudNotesV2ToV3CompilesAgainstTheJSONModels() throws {
        let mapping = try importedUnCloudNotes(from: 2)
        XCTAssertEqual(mapping.name, "UnCloudNotesMappingModel_v2_to_v3")
        XCTAssertEqual(
            mapping.entityMappings.flatMap(summary),
            [
                "NoteToAttachment transform Note -> Attachment policy=-",
                "  source: Note where image != nil",
                "  attribute dateCreated = $source.dateCreated",
                "  attribute image = $source.image",
                "  relationship note = FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)",
                "NoteToNote copy Note -> Note policy=-",
                "  source: Note where TRUEPREDICATE",
                "  attribute body = $source.body",
                "  attribute dateCreated = $source.dateCreated",
                "  attribute displayIndex = $source.displayIndex",
                "  attribute title = $source.title",
            ])
        XCTAssertEqual(
            mapping.entityMappings[0].sourceExpressionText,
            "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \"image != nil\"), $manager.sourceContext, NO)"
        )
        // z111 'attachments' is kept in the document but listed by no entity mapping.
        XCTAssertEqual(mapping.warnings.filter { $0.contains("z111") }.count, 1, "\(mapping.warnings)")
    }

    func testUnCloudNotesV3ToV4CompilesAgainstTheJSONModels() throws {
        let mapping = try importedUnCloudNotes(from: 3)
        XCTAssertEqual(
            mapping.entityMappings.flatMap(summary),
            [
                "AttachmentToAttachment copy Attachment -> Attachment policy=-",
                "  source: Attachment where TRUEPREDICATE",
                "  attribute dateCreated = $source.dateCreated",
                "  relationship note = FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source.note)",
                "NoteToNote copy Note -> Note policy=-",
                "  source: Note where TRUEPREDICATE",
                "  attribute body = $source.body",
                "  attribute dateCreated = $source.dateCreated",
                "  attribute displayIndex = $source.displayIndex",
                "  attribute title = $source.title",
                "  relationship attachments = FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"AttachmentToAttachment\", $source.attachments)",
                "AttachmentToImageAttachment transform Attachment -> ImageAttachment policy=AttachmentToImageAttachmentMigrationPolicyV3toV4",
                "  source: Attachment where TRUEPREDICATE",
                "  attribute dateCreated = $source.dateCreated",
                "  attribute image = $source.image",
                "  relationship note = FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source.note)",
            ])
        // caption, height and width (z103, z106, z114) are orphans of the document.
        for id in ["z103", "z106", "z114"] { XCTAssertEqual(mapping.warnings.filter { $0.contains(id) }.count, 1, id) }
        let v4 = try UnCloudNotes.model(version: 4)
        let v3 = try UnCloudNotes.model(version: 3)
        XCTAssertEqual(mapping.entityMappings[0].sourceEntityVersionHash, v3.entity(named: "Attachment")?.versionHash)
        XCTAssertEqual(
            mapping.entityMappings[2].destinationEntityVersionHash, v4.entity(named: "ImageAttachment")?.versionHash)
    }

    /// What the course's Xcode file says differently from the JSON reference migration 4 was written
    /// as (examples/4-uncloudnotes/UnCloudNotes_v3_to_v4.mapping.json).
    func testUnCloudNotesV3ToV4DiffersFromTheJSONMappingOnlyWhereTheXcodeFileDoes() throws {
        let imported = try importedUnCloudNotes(from: 3)
        let json = try UnCloudNotes.mapping(from: 3)
        XCTAssertEqual(imported.entityMappings.map { $0.name }, json.entityMappings.map { $0.name })
        var differences: [String] = []
        for (x, j) in zip(imported.entityMappings, json.entityMappings) {
            if x.mappingType != j.mappingType {
                differences.append("\(x.name): type \(x.mappingType.rawValue), JSON \(j.mappingType.rawValue)")
            }
            if x.entityMigrationPolicyClassName != j.entityMigrationPolicyClassName {
                differences.append("\(x.name): policy")
            }
            if x.sourceExpression?.predicate.description != j.sourceExpression?.predicate.description {
                differences.append(
                    "\(x.name): predicate \(x.sourceExpression?.predicate.description ?? "-"), JSON \(j.sourceExpression?.predicate.description ?? "-")"
                )
            }
            for (kind, xs, js) in [
                ("attribute", x.attributeMappings, j.attributeMappings),
                ("relationship", x.relationshipMappings, j.relationshipMappings),
            ] {
                let jByName = Dictionary(uniqueKeysWithValues: js.map { ($0.name, $0.valueExpressionText) })
                let xByName = Dictionary(uniqueKeysWithValues: xs.map { ($0.name, $0.valueExpressionText) })
                for name in Set(jByName.keys).union(xByName.keys).sorted() where jByName[name] != xByName[name] {
                    differences.append(
                        "\(x.name): \(kind) \(name) \(xByName[name].map { $0 ?? "nil" } ?? "absent"), JSON \(jByName[name].map { $0 ?? "nil" } ?? "absent")"
                    )
                }
            }
        }
        XCTAssertEqual(
            differences,
            [
                "AttachmentToAttachment: type copy, JSON transform",
                "AttachmentToAttachment: predicate TRUEPREDICATE, JSON image == nil",
                "NoteToNote: relationship attachments FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"AttachmentToAttachment\", $source.attachments), JSON absent",
                "AttachmentToImageAttachment: type transform, JSON custom",
                "AttachmentToImageAttachment: predicate TRUEPREDICATE, JSON image != nil",
            ])
    }

    /// The imported mapping runs with the course's Swift policy registered under its Xcode name
    /// (module-qualified). The course's file has no filter predicates, so, as Core Data would, every
    /// Attachment becomes both a plain Attachment and an ImageAttachment; the Notes and the
    /// ImageAttachments made from attachments with an image are those of the JSON mapping.
    func testUnCloudNotesV3ToV4MigratesWithTheImportedMappingAndTheSwiftPolicy() throws {
        let source = directory + "/v3.sqlite"
        let notes = try UnCloudNotes.generateSource(version: 3, at: source, count: 60)
        let v3 = try UnCloudNotes.model(version: 3)
        let v4 = try UnCloudNotes.model(version: 4)

        let jsonDestination = directory + "/v4-json.sqlite"
        _ = try UnCloudNotes.manager(from: 3).migrateStore(from: source, to: jsonDestination)

        let xcodeDestination = directory + "/v4-xcode.sqlite"
        let manager = try MigrationManager(
            sourceModel: v3, destinationModel: v4,
            mappingModels: [try MappingModel(contentsOf: uncloudMapping(3), sourceModel: v3, destinationModel: v4)])
        manager.registerPolicy(named: "UnCloudNotes." + AttachmentToImageAttachmentMigrationPolicyV3toV4.name) {
            AttachmentToImageAttachmentMigrationPolicyV3toV4()
        }
        _ = try manager.migrateStore(from: source, to: xcodeDestination)

        func rows(_ path: String) throws -> (
            notes: [String], images: [String], plain: Int, imageless: Int, attachmentsPerNote: [String: Int]
        ) {
            try StoreAccess.readStore(at: path, model: v4) { store in
                let noteRows = try StoreAccess.all("Note", in: store).map { n in
                    "\(try n.string("title") ?? "") \(try n.string("body") ?? "") \(try n.value(forKey: "dateCreated")) \(try n.value(forKey: "displayIndex"))"
                }.sorted()
                var images: [String] = []
                var imageless = 0
                for a in try StoreAccess.all("ImageAttachment", in: store) {
                    guard case .binary(let bytes) = try a.value(forKey: "image") else {
                        imageless += 1
                        continue
                    }
                    images.append(
                        "\(try a.value(forKeyPath: "note.title")) \(bytes.count) \(bytes.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFFFF }) \(try a.value(forKey: "width")) \(try a.value(forKey: "height")) \(try a.string("caption") ?? "") \(try a.value(forKey: "dateCreated"))"
                    )
                }
                var perNote: [String: Int] = [:]
                for n in try StoreAccess.all("Note", in: store) {
                    perNote[try n.string("title") ?? ""] = try n.objects("attachments").count
                }
                return (
                    noteRows, images.sorted(), try StoreAccess.all("Attachment", in: store, exact: true).count,
                    imageless, perNote
                )
            }
        }
        let fromJSON = try rows(jsonDestination)
        let fromXcode = try rows(xcodeDestination)
        XCTAssertEqual(fromXcode.notes, fromJSON.notes)
        XCTAssertEqual(fromXcode.notes.count, notes.count)
        XCTAssertEqual(fromXcode.images, fromJSON.images)
        XCTAssertGreaterThan(fromJSON.images.count, 20)

        let attachments = notes.reduce(0) { $0 + $1.images.count } + 2  // and the two without a note
        let withoutImage = notes.reduce(0) { $0 + $1.images.filter { $0 == nil }.count } + 1
        XCTAssertEqual(fromJSON.plain, withoutImage)
        XCTAssertEqual(fromJSON.imageless, 0)
        XCTAssertEqual(fromXcode.plain, attachments, "AttachmentToAttachment takes every attachment")
        XCTAssertEqual(
            fromXcode.imageless, withoutImage, "AttachmentToImageAttachment takes those without an image too")
        for g in notes {
            XCTAssertEqual(fromJSON.attachmentsPerNote[g.title], g.images.count, g.title)
            XCTAssertEqual(fromXcode.attachmentsPerNote[g.title], 2 * g.images.count, g.title)
        }
    }

    func testPolicyRegisteredUnderEitherNameServesTheMapping() throws {
        let v3 = try UnCloudNotes.model(version: 3)
        let v4 = try UnCloudNotes.model(version: 4)
        let source = directory + "/v3.sqlite"
        try UnCloudNotes.generateSource(version: 3, at: source, count: 8)
        // The JSON mapping names the bare class; a registration under the module-qualified name serves it.
        let manager = try MigrationManager(
            sourceModel: v3, destinationModel: v4, mappingModels: [try UnCloudNotes.mapping(from: 3)])
        manager.registerPolicy(named: "UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4") {
            AttachmentToImageAttachmentMigrationPolicyV3toV4()
        }
        XCTAssertNoThrow(try manager.migrateStore(from: source, to: directory + "/a.sqlite"))
        // A mapping naming the qualified class is served by the bare registration.
        let bare = try MigrationManager(
            sourceModel: v3, destinationModel: v4, mappingModels: [try importedUnCloudNotes(from: 3)])
        bare.registerPolicy(named: "AttachmentToImageAttachmentMigrationPolicyV3toV4") {
            AttachmentToImageAttachmentMigrationPolicyV3toV4()
        }
        XCTAssertNotNil(bare.policyFactory(named: "UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4"))
        XCTAssertNil(bare.policyFactory(named: "UnCloudNotes.AttachmentToAttachmentMigrationPolicyV3toV4"))
        // An unregistered policy is still an error.
        let unregistered = try MigrationManager(
            sourceModel: v3, destinationModel: v4, mappingModels: [try UnCloudNotes.mapping(from: 3)])
        unregistered.registerPolicy(named: "UnCloudNotes.SomethingElse") {
            AttachmentToImageAttachmentMigrationPolicyV3toV4()
        }
        XCTAssertThrowsError(try unregistered.migrateStore(from: source, to: directory + "/b.sqlite")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .entityMigrationPolicy)
        }
    }

    // MARK: Paths and malformed documents

    func testReadsTheFolderTheFileAndAFolderPathWithATrailingSlash() throws {
        let names = try [uncloudMapping(3), uncloudMapping(3) + "/", uncloudMapping(3) + "/xcmapping.xml"].map {
            try MappingModel(
                contentsOf: $0, sourceModel: try UnCloudNotes.model(version: 3),
                destinationModel: try UnCloudNotes.model(version: 4)
            ).entityMappings.map { $0.name }
        }
        XCTAssertEqual(names[0], ["AttachmentToAttachment", "NoteToNote", "AttachmentToImageAttachment"])
        XCTAssertEqual(names[1], names[0])
        XCTAssertEqual(names[2], names[0])
        XCTAssertThrowsError(
            try MappingModel(
                contentsOf: directory + "/None.xcmappingmodel", sourceModel: try UnCloudNotes.model(version: 3),
                destinationModel: try UnCloudNotes.model(version: 4))
        ) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .io)
        }
    }

    func testReadingWithModelsTakesEitherKindOfMapping() throws {
        let v3 = try UnCloudNotes.model(version: 3)
        let v4 = try UnCloudNotes.model(version: 4)
        let json = try MappingModel(
            contentsOf:
                ReferenceMigrations.examplesDirectory + "/4-uncloudnotes/UnCloudNotes_v3_to_v4.mapping.json",
            sourceModel: v3, destinationModel: v4)
        XCTAssertEqual(json.entityMappings[0].sourceExpression?.predicate.description, "image == nil")
        let xcode = try MappingModel(contentsOf: uncloudMapping(3), sourceModel: v3, destinationModel: v4)
        XCTAssertEqual(xcode.entityMappings[0].sourceExpression?.predicate.description, "TRUEPREDICATE")
        XCTAssertTrue(XcodeMappingModelReader.isXcodeMappingModelPath("a/B.xcmappingmodel/"))
        XCTAssertFalse(XcodeMappingModelReader.isXcodeMappingModelPath("a/B.mapping.json"))
        // Without the models an Xcode mapping cannot be compiled: the JSON reader says which call to use.
        XCTAssertThrowsError(try MappingModel(contentsOf: uncloudMapping(3))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidArgument)
            XCTAssertTrue(
                (error as? MigrationError)?.message.contains("MappingModel(contentsOf:sourceModel:destinationModel:)")
                    == true)
        }
        // The JSON mapping is checked against the models too.
        XCTAssertThrowsError(
            try MappingModel(
                contentsOf:
                    ReferenceMigrations.examplesDirectory + "/4-uncloudnotes/UnCloudNotes_v3_to_v4.mapping.json",
                sourceModel: v4, destinationModel: v3))
    }

    func testMappingThatDoesNotFitTheModelsIsRejected() throws {
        // The v2 → v3 mapping against v3 → v4's models: Note has no image in v3.
        XCTAssertThrowsError(
            try MappingModel(
                contentsOf: uncloudMapping(2), sourceModel: try UnCloudNotes.model(version: 3),
                destinationModel: try UnCloudNotes.model(version: 4))
        ) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidMapping)
        }
    }

    func write(_ text: String) throws -> String {
        let folder = directory + "/Broken.xcmappingmodel"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileIO.write(Array(text.utf8), path: folder + "/xcmapping.xml")
        return folder
    }

    static let validBody = """
            <object type="XDDEVMAPPINGMODEL" id="z1">
                <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z2"></relationship>
            </object>
            <object type="XDDEVENTITYMAPPING" id="z2">
                <attribute name="sourcename" type="string">Note</attribute>
                <attribute name="destinationname" type="string">Note</attribute>
                <attribute name="mappingtypename" type="string">Undefined</attribute>
                <attribute name="mappingnumber" type="int16">1</attribute>
                <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z3"></relationship>
            </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z3">
                <attribute name="name" type="string">title</attribute>
            </object>
        """

    func document(_ body: String) -> String {
        "<?xml version=\"1.0\"?>\n<database>\n<databaseInfo><version>1</version></databaseInfo>\n\(body)\n</database>\n"
    }

    func assertInvalid(_ body: String, naming parts: [String], file: StaticString = #filePath, line: UInt = #line)
        throws
    {
        let path = try write(document(body))
        XCTAssertThrowsError(
            try XcodeMappingModelReader.read(path: path, sourceModel: nil, destinationModel: nil), file: file,
            line: line
        ) { error in
            guard let error = error as? MigrationError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.code, .invalidMapping, error.description, file: file, line: line)
            for part in parts {
                XCTAssertTrue(error.message.contains(part), "'\(part)' not in \(error.message)", file: file, line: line)
            }
        }
    }

    func testMinimalDocumentReads() throws {
        let mapping = try XcodeMappingModelReader.read(
            path: try write(document(Self.validBody)), sourceModel: nil, destinationModel: nil)
        XCTAssertEqual(mapping.name, "Broken")
        XCTAssertEqual(
            mapping.entityMappings.flatMap(summary),
            [
                "NoteToNote copy Note -> Note policy=-", "  source: Note where TRUEPREDICATE",
                "  attribute title = $source.title",
            ])
    }

    func testMalformedDocumentsNameTheObjectAndLine() throws {
        try assertInvalid("<object type=\"XDDEVMAPPINGMODEL\" id=\"z1\"><attribute name=\"x\">", naming: ["line"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(
                of: "<attribute name=\"mappingnumber\" type=\"int16\">1</attribute>",
                with: "<attribute name=\"mappingnumber\" type=\"int16\">one</attribute>"),
            naming: ["z2", "line 11", "mappingnumber"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(
                of: "<attribute name=\"mappingnumber\" type=\"int16\">1</attribute>", with: ""),
            naming: ["z2", "mappingnumber"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(of: "idrefs=\"z2\"", with: "idrefs=\"z2 z9\""), naming: ["z1", "z9"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(of: "idrefs=\"z2\"", with: "idrefs=\"z3\""),
            naming: ["z1", "z3", "XDDEVENTITYMAPPING"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(of: ">Undefined<", with: ">Sideways<"), naming: ["z2", "Sideways"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(
                of: "<attribute name=\"name\" type=\"string\">title</attribute>", with: ""), naming: ["z3", "no name"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(of: "id=\"z3\"", with: "id=\"z2\""), naming: ["z2", "twice"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(
                of: "type=\"XDDEVATTRIBUTEMAPPING\" id=", with: "type=\"XDDEVGARBLE\" id="),
            naming: ["z3", "XDDEVGARBLE"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(of: "XDDEVMAPPINGMODEL\" id", with: "XDDEVENTITYMAPPING\" id"),
            naming: ["no XDDEVMAPPINGMODEL"])
        try assertInvalid(
            Self.validBody
                + "\n<object type=\"XDDEVENTITYMAPPING\" id=\"z4\"><attribute name=\"sourcename\" type=\"string\">N</attribute><attribute name=\"sourcename\" type=\"string\">M</attribute></object>",
            naming: ["z4", "twice"])
        try assertInvalid(
            Self.validBody.replacingOccurrences(
                of: "<attribute name=\"destinationname\" type=\"string\">Note</attribute>",
                with:
                    "<attribute name=\"destinationname\" type=\"string\">Note</attribute><attribute name=\"sourcefilterpredicatestring\" type=\"string\">title ==</attribute>"
            ),
            naming: ["z2", "title =="])
        let garbage = try write("\u{0}\u{1}binary garbage")
        XCTAssertThrowsError(try XcodeMappingModelReader.read(path: garbage, sourceModel: nil, destinationModel: nil)) {
            error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidMapping)
        }
        let notAStore = try write("<?xml version=\"1.0\"?><plist><dict/></plist>")
        XCTAssertThrowsError(try XcodeMappingModelReader.read(path: notAStore, sourceModel: nil, destinationModel: nil))
        { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidMapping)
            XCTAssertTrue((error as? MigrationError)?.message.contains("<plist>") == true)
        }
    }

    func testAttributeWithoutSourceCounterpartGetsNoExpressionAndAnUnmappedOneIsNamed() throws {
        let source = try ManagedObjectModel(
            json: """
                {"name": "a", "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "body", "type": "string"}]}]}
                """)
        let destination = try ManagedObjectModel(
            json: """
                {"name": "b", "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "body", "type": "string"},
                                                                         {"name": "summary", "type": "string"}]}]}
                """)
        let body =
            Self.validBody.replacingOccurrences(of: "idrefs=\"z3\"", with: "idrefs=\"z3 z4\"")
            + "\n<object type=\"XDDEVATTRIBUTEMAPPING\" id=\"z4\"><attribute name=\"name\" type=\"string\">summary</attribute></object>"
        let mapping = try MappingModel(
            contentsOf: try write(document(body)), sourceModel: source, destinationModel: destination)
        XCTAssertEqual(
            mapping.entityMappings[0].attributeMappings.map { [$0.name, $0.valueExpressionText] },
            [["summary", nil], ["title", "$source.title"]])
        XCTAssertEqual(mapping.warnings.filter { $0.contains("'body'") }.count, 1, "\(mapping.warnings)")
        XCTAssertFalse(mapping.warnings.contains { $0.contains("'summary'") })
    }

    /// Truncated and garbled copies of a real document: each loads or fails with `.invalidMapping`, none traps.
    func testGarbledCopiesOfARealDocumentNeverTrap() throws {
        let original = Array(try FileIO.readText(path: uncloudMapping(3) + "/xcmapping.xml").utf8)
        let v3 = try UnCloudNotes.model(version: 3)
        let v4 = try UnCloudNotes.model(version: 4)
        // Mutate where the structure is: markup characters outside the base64 model data.
        let marks = original.indices.filter {
            [UInt8(ascii: "<"), UInt8(ascii: "\""), UInt8(ascii: ">"), UInt8(ascii: "z")].contains(original[$0])
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var loaded = 0
        var rejected = 0
        for round in 0..<120 {
            var bytes = original
            let at = marks[next(marks.count)]
            switch round % 4 {
            case 0: bytes.removeSubrange(at...)
            case 1: bytes.remove(at: at)
            case 2: bytes[at] = [UInt8(ascii: "x"), UInt8(ascii: "9"), UInt8(ascii: " "), UInt8(ascii: "'")][next(4)]
            default: bytes.insert(contentsOf: Array(" z\(next(200))".utf8), at: at)
            }
            let folder = directory + "/G\(round).xcmappingmodel"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileIO.write(bytes, path: folder + "/xcmapping.xml")
            do {
                _ = try MappingModel(contentsOf: folder, sourceModel: v3, destinationModel: v4)
                loaded += 1
            } catch let error as MigrationError {
                XCTAssertEqual(error.code, .invalidMapping, error.description)
                rejected += 1
            }
        }
        XCTAssertGreaterThan(rejected, 40)
        XCTAssertEqual(loaded + rejected, 120)
    }

    func testOrphanEntityMappingIsDroppedWithAWarning() throws {
        let body =
            Self.validBody + """

                    <object type="XDDEVENTITYMAPPING" id="z7">
                        <attribute name="sourcename" type="string">Tag</attribute>
                        <attribute name="mappingnumber" type="int16">2</attribute>
                    </object>
                """
        let mapping = try XcodeMappingModelReader.read(
            path: try write(document(body)), sourceModel: nil, destinationModel: nil)
        XCTAssertEqual(mapping.entityMappings.map { $0.name }, ["NoteToNote"])
        XCTAssertEqual(mapping.warnings.count, 1)
        XCTAssertTrue(mapping.warnings[0].contains("z7") && mapping.warnings[0].contains("line"), mapping.warnings[0])
    }

    func testDerivedTypesNamesAndModulePrefix() {
        XCTAssertEqual(XcodeMappingModelReader.derivedType(source: "A", destination: "A"), .copy)
        XCTAssertEqual(XcodeMappingModelReader.derivedType(source: "A", destination: "B"), .transform)
        XCTAssertEqual(XcodeMappingModelReader.derivedType(source: nil, destination: "B"), .add)
        XCTAssertEqual(XcodeMappingModelReader.derivedType(source: "A", destination: nil), .remove)
        XCTAssertEqual(
            XcodeMappingModelReader.defaultName(source: "Note", destination: "Attachment"), "NoteToAttachment")
        XCTAssertEqual(
            XcodeMappingModelReader.unqualified("UnCloudNotes.AttachmentToAttachmentMigrationPolicyV3toV4"),
            "AttachmentToAttachmentMigrationPolicyV3toV4")
        XCTAssertEqual(XcodeMappingModelReader.unqualified("Plain"), "Plain")
    }

    func testAStringConstantWrittenIntoAnExpressionReadsBackAsTheSameString() throws {
        XCTAssertEqual(ValueExpression.quoted("a \"b\" \\ c"), "\"a \\\"b\\\" \\\\ c\"")
        for text in ["a \"b\" \\ c", "line\nnext\ttab\r", "bell\u{7} delete\u{7F}", "café ✓"] {
            XCTAssertEqual(
                try ExpressionParser.parseExpression(ValueExpression.quoted(text)), .constant(.string(text)), text)
        }
    }
}
