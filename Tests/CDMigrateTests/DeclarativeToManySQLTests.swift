import CSQLite
import XCTest

@testable import CDMigrate

/// To-many relationship mappings of the standard forms run as SQL in stage 2 and leave the store
/// exactly as the per-instance path does: the same join rows, owners and ordering columns.
final class DeclarativeToManySQLTests: XCTestCase, SQLiteFileAccess {
    static let blog = """
        {"name": "Blog", "entities": [
          {"name": "Post", "attributes": [{"name": "title", "type": "string"}], "relationships": [
            {"name": "tags", "destination": "Tag", "inverse": "posts", "toMany": true},
            {"name": "comments", "destination": "Comment", "inverse": "post", "toMany": true, "ordered": true}]},
          {"name": "Tag", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "posts", "destination": "Post", "inverse": "tags", "toMany": true}]},
          {"name": "Comment", "attributes": [{"name": "text", "type": "string"}], "relationships": [
            {"name": "post", "destination": "Post", "inverse": "comments"}]}
        ]}
        """
    static let journal = """
        {"name": "Journal", "entities": [
          {"name": "Article", "attributes": [{"name": "title", "type": "string"}], "relationships": [
            {"name": "labels", "destination": "Label", "inverse": "articles", "toMany": true, "ordered": true},
            {"name": "topics", "destination": "Topic", "inverse": "articles", "toMany": true},
            {"name": "notes", "destination": "Note", "inverse": "article", "toMany": true, "ordered": true},
            {"name": "remarks", "destination": "Note", "toMany": true},
            {"name": "extras", "destination": "Extra", "inverse": "article", "toMany": true},
            {"name": "badges", "destination": "Badge", "inverse": "article", "toMany": true, "ordered": true},
            {"name": "stickers", "destination": "Sticker", "inverse": "article", "toMany": true}]},
          {"name": "Label", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "articles", "destination": "Article", "inverse": "labels", "toMany": true, "ordered": true}]},
          {"name": "Topic", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "articles", "destination": "Article", "inverse": "topics", "toMany": true}]},
          {"name": "Note", "attributes": [{"name": "text", "type": "string"}], "relationships": [
            {"name": "article", "destination": "Article", "inverse": "notes"}]},
          {"name": "Extra", "attributes": [{"name": "title", "type": "string"}], "relationships": [
            {"name": "article", "destination": "Article", "inverse": "extras"}]},
          {"name": "Badge", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "article", "destination": "Article", "inverse": "badges"}]},
          {"name": "Sticker", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "article", "destination": "Article", "inverse": "stickers"}]}
        ]}
        """

    var scratch: ScratchDirectory!
    var v1: ManagedObjectModel!
    var v2: ManagedObjectModel!
    var source: String!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        v1 = try ManagedObjectModel(json: Self.blog)
        v2 = try ManagedObjectModel(json: Self.journal)
        source = scratch.file("blog.sqlite")
        try makeStore(source, v1) { store in
            let posts = try (0..<4).map { try insert(store, "Post", ["title": .string("P\($0)")]) }
            let tags = try (0..<5).map { try insert(store, "Tag", ["name": .string("T\($0)")]) }
            let comments = try (0..<8).map { try insert(store, "Comment", ["text": .string("C\($0)")]) }
            let tagsOf: [[Int]] = [[3, 1], [0, 1, 2], [], [4, 3, 0]]
            let commentsOf: [[Int]] = [[5, 1, 6], [0], [], [2, 7, 3]]  // C4 has no post
            let tagsRelationship = try XCTUnwrap(v1.entity(named: "Post")?.relationship(named: "tags"))
            for (p, post) in posts.enumerated() {
                try post.add(tagsOf[p].map { tags[$0] }, to: tagsRelationship)
                for c in commentsOf[p] { try comments[c].setValue(.object(post), forKey: "post") }
            }
        }
    }

    static func lookUp(_ mapping: String, _ key: String) -> String {
        "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"\(mapping)\\\", \(key))"
    }

    /// The mapping model: `article` and `others` are the relationship mappings of PostToArticle and
    /// of the other mappings (by mapping name); `tagsFirst` puts the tag mappings before the post's.
    func mapping(
        article: [String: String], others: [String: [String: String]] = [:], postPredicate: String = "TRUEPREDICATE",
        tagPredicate: String = "TRUEPREDICATE", tagsFirst: Bool = false
    ) throws -> MappingModel {
        func relationships(_ r: [String: String]) -> String {
            r.isEmpty
                ? ""
                : ", \"relationshipMappings\": {"
                    + r.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ", ")
                    + "}"
        }
        let post = """
              {"name": "PostToArticle", "sourceEntity": "Post", "destinationEntity": "Article", "predicate": "\(postPredicate)",
               "attributeMappings": {"title": "$source.title"}\(relationships(article))}
            """
        var tagMappings: [String] = []
        for (name, entity) in [
            ("TagToLabel", "Label"), ("TagToTopic", "Topic"), ("TagToBadge", "Badge"), ("TagToSticker", "Sticker"),
        ] {
            tagMappings.append(
                """
                  {"name": "\(name)", "sourceEntity": "Tag", "destinationEntity": "\(entity)", "predicate": "\(tagPredicate)",
                   "attributeMappings": {"name": "$source.name"}\(relationships(others[name] ?? [:]))}
                """)
        }
        let rest = """
              {"name": "CommentToNote", "sourceEntity": "Comment", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
               "attributeMappings": {"text": "$source.text"}\(relationships(others["CommentToNote"] ?? [:]))},
              {"name": "PostToExtra", "sourceEntity": "Post", "destinationEntity": "Extra", "predicate": "TRUEPREDICATE",
               "attributeMappings": {"title": "$source.title"}}
            """
        let all = tagsFirst ? tagMappings + [post, rest] : [post] + tagMappings + [rest]
        return try MappingModel(json: "{\"entityMappings\": [\(all.joined(separator: ",\n"))]}")
    }

    /// Runs the mapping per instance, then with SQL (renumbered and, unless filtered, with kept
    /// keys): every run must write the same store. Returns the SQL run's report and store.
    @discardableResult
    func checkSame(_ model: MappingModel, line: UInt = #line) throws -> (MigrationReport, [String: [String]]) {
        let perInstance = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: model)
        perInstance.pushDownSQL = false
        let expectedPath = scratch.file("per-instance-\(line).sqlite")
        _ = try perInstance.migrateStore(from: source, to: expectedPath)
        let expected = entityTables(expectedPath)
        var last: (MigrationReport, [String: [String]])?
        for keeps in [false, true] {
            let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: model)
            manager.keepsSourceKeys = keeps
            let path = scratch.file("sql-\(keeps)-\(line).sqlite")
            let report = try manager.migrateStore(from: source, to: path)
            let got = entityTables(path)
            for table in expected.keys.sorted() {
                XCTAssertEqual(got[table], expected[table], "table \(table), keeps keys: \(keeps)", line: line)
            }
            last = (report, got)
        }
        return try XCTUnwrap(last)
    }

    func bySQL(_ report: MigrationReport, _ name: String) -> Bool? {
        report.mappings.first { $0.entityMappingName == name }?.relationshipsBySQL
    }

    func testManyToManyOneToManyAndNoInverseToManysMatchThePerInstancePath() throws {
        let model = try mapping(article: [
            "labels": Self.lookUp("TagToLabel", "$source.tags"),
            "topics": Self.lookUp("TagToTopic", "$source.tags"),
            "notes": Self.lookUp("CommentToNote", "$source.comments"),
            "remarks":
                "FUNCTION($manager, \\\"destinationInstancesForSourceRelationshipNamed:sourceInstances:\\\", \\\"comments\\\", $source.comments)",
            "extras": Self.lookUp("PostToExtra", "$source"),
            "stickers": Self.lookUp("TagToSticker", "$source.tags"),
        ])
        let (report, rows) = try checkSame(model)
        XCTAssertEqual(bySQL(report, "PostToArticle"), true)
        // Ordered on both sides (article, label, article's order, label's order): Article 1 (P0)
        // lists T1, T3 (keys 2, 4) in key order, the source's order of an unordered to-many;
        // Label 1 (T0) lists P1, P3 (keys 2, 4) in the order the articles were made.
        let labels = try XCTUnwrap(rows.first { $0.key.hasSuffix("LABELS") }?.value)
        XCTAssertEqual(labels.count, 8)
        XCTAssertTrue(labels.contains("1|2|1|1") && labels.contains("1|4|2|1"), "\(labels)")
        XCTAssertTrue(labels.contains("2|1|1|1") && labels.contains("4|1|1|2"), "\(labels)")
        // Notes keep the comments' order: P0's C5, C1, C6 (keys 6, 2, 7) at 1, 2, 3.
        XCTAssertEqual(
            rows["ZNOTE"]?.filter {
                ["C5", "C1", "C6"].contains(where: $0.split(separator: "|").map(String.init).contains)
            }.count, 3)
    }

    func testOrderedListsContinueAfterWhatTheInverseMappingWroteFirst() throws {
        // TagToLabel runs first and sets Label.articles; PostToArticle then adds the same pairs (no-ops) in its order.
        let model = try mapping(
            article: ["labels": Self.lookUp("TagToLabel", "$source.tags")],
            others: ["TagToLabel": ["articles": Self.lookUp("PostToArticle", "$source.posts")]], tagsFirst: true)
        let (report, _) = try checkSame(model)
        XCTAssertEqual(bySQL(report, "PostToArticle"), true)
        XCTAssertEqual(bySQL(report, "TagToLabel"), true)
    }

    func testFilteredMappingsLinkOnlyWhatTheyMade() throws {
        let model = try mapping(
            article: [
                "labels": Self.lookUp("TagToLabel", "$source.tags"),
                "topics": Self.lookUp("TagToTopic", "$source.tags"),
                "notes": Self.lookUp("CommentToNote", "$source.comments"),
            ], postPredicate: "title != 'P1'", tagPredicate: "name != 'T3'")
        let (report, rows) = try checkSame(model)
        XCTAssertEqual(bySQL(report, "PostToArticle"), true)
        XCTAssertEqual(rows["ZARTICLE"]?.count, 3)
        XCTAssertEqual(rows["ZLABEL"]?.count, 4)
    }

    func testAnOrderedOneToManyWhoseMembersHaveSeveralOwnersRunsPerInstance() throws {
        // T0, T1 and T3 belong to two posts each: their badges change owner as the adds go.
        let model = try mapping(article: ["badges": Self.lookUp("TagToBadge", "$source.tags")])
        let (report, rows) = try checkSame(model)
        XCTAssertEqual(bySQL(report, "PostToArticle"), false)
        XCTAssertEqual(rows["ZBADGE"]?.count, 5)
    }

    func testAnUnorderedOneToManyGivesEachMemberItsLastOwner() throws {
        let model = try mapping(article: ["stickers": Self.lookUp("TagToSticker", "$source.tags")])
        let (report, rows) = try checkSame(model)
        XCTAssertEqual(bySQL(report, "PostToArticle"), true)
        // Stickers T0..T4 (keys 1...5; Z_PK, Z_ENT, Z_OPT, ZARTICLE, ZNAME) end with articles P3, P1, P1, P3, P3 (keys 4, 2, 2, 4, 4).
        XCTAssertEqual(
            rows["ZSTICKER"]?.map { $0.split(separator: "|").map(String.init) }.map { "\($0[0]):\($0[3])" },
            ["1:4", "2:2", "3:2", "4:4", "5:4"])
    }

    func testOtherValueExpressionsRunPerInstance() throws {
        let other =
            "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"TagToTopic\\\", FUNCTION($source, \\\"valueForKeyPath:\\\", \\\"tags\\\"))"
        let model = try mapping(article: ["topics": other, "notes": Self.lookUp("CommentToNote", "$source.comments")])
        let (report, _) = try checkSame(model)
        XCTAssertEqual(
            bySQL(report, "PostToArticle"), false,
            "one relationship the SQL cannot express: the whole mapping per instance")
    }

    func testAnOrderedToManyAndItsInverseToOneSetByAnotherMappingAgree() throws {
        // Article.notes by PostToArticle (SQL), then Note.article by CommentToNote (per instance:
        // a to-one whose inverse is ordered), which finds every note in place already.
        let separate = try mapping(
            article: ["notes": Self.lookUp("CommentToNote", "$source.comments")],
            others: ["CommentToNote": ["article": Self.lookUp("PostToArticle", "$source.post")]])
        let (report, _) = try checkSame(separate)
        XCTAssertEqual(bySQL(report, "PostToArticle"), true)
        XCTAssertEqual(bySQL(report, "CommentToNote"), false)
    }

    func testSelfInverseAndSameMappingInversesRunPerInstance() throws {
        let people = """
            {"name": "People", "entities": [
              {"name": "Person", "attributes": [{"name": "name", "type": "string"}], "relationships": [
                {"name": "friends", "destination": "Person", "inverse": "friends", "toMany": true},
                {"name": "children", "destination": "Person", "inverse": "parent", "toMany": true},
                {"name": "parent", "destination": "Person", "inverse": "children"}]}
            ]}
            """
        v1 = try ManagedObjectModel(json: people)
        v2 = try ManagedObjectModel(json: people)
        source = scratch.file("people.sqlite")
        let friends = try XCTUnwrap(v1.entity(named: "Person")?.relationship(named: "friends"))
        try makeStore(source, v1) { store in
            let p = try (0..<4).map { try insert(store, "Person", ["name": .string("N\($0)")]) }
            try p[0].add([p[1], p[2]], to: friends)
            try p[3].add([p[1]], to: friends)
            for c in [2, 3] { try p[c].setValue(.object(p[0]), forKey: "parent") }
        }
        func model(_ relationships: [String: String]) throws -> MappingModel {
            let r = relationships.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(
                separator: ", ")
            return try MappingModel(
                json:
                    """
                    {"entityMappings": [{"name": "PersonToPerson", "sourceEntity": "Person", "destinationEntity": "Person",
                      "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.name"}, "relationshipMappings": {\(r)}}]}
                    """)
        }
        let selfInverse = try checkSame(try model(["friends": Self.lookUp("PersonToPerson", "$source.friends")]))
        XCTAssertEqual(bySQL(selfInverse.0, "PersonToPerson"), false)
        let both = try checkSame(
            try model([
                "children": Self.lookUp("PersonToPerson", "$source.children"),
                "parent": Self.lookUp("PersonToPerson", "$source.parent"),
            ]))
        XCTAssertEqual(
            bySQL(both.0, "PersonToPerson"), false, "the inverse is set by the same mapping, instance by instance")
        let alone = try checkSame(try model(["children": Self.lookUp("PersonToPerson", "$source.children")]))
        XCTAssertEqual(bySQL(alone.0, "PersonToPerson"), true)
    }
}
