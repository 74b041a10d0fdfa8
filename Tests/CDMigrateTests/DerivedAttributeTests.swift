import Foundation
import XCTest

@testable import CDMigrate

/// Derived attributes (NSDerivedAttributeDescription): read from every model form, computed for
/// migrated rows in SQL, and maintained afterwards by the `Z_DA_…` triggers Core Data installs.
final class DerivedAttributeTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    /// v1: lists with items and tags. v2 adds derived attributes of every kind Core Data keeps in SQL.
    static let v1 = """
        {"name": "Lists", "entities": [
          {"name": "List", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "items", "destination": "Item", "inverse": "list", "toMany": true},
                             {"name": "tags", "destination": "Tag", "inverse": "lists", "toMany": true}]},
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "price", "type": "double"}],
           "relationships": [{"name": "list", "destination": "List", "inverse": "items"}]},
          {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "lists", "destination": "List", "inverse": "tags", "toMany": true}]}]}
        """
    static let v2 = """
        {"name": "Lists", "entities": [
          {"name": "List", "attributes": [{"name": "name", "type": "string"},
             {"name": "itemCount", "type": "int64", "derivationExpression": "items.@count"},
             {"name": "total", "type": "double", "derivationExpression": "items.price.@sum"},
             {"name": "dearest", "type": "double", "derivationExpression": "max:(items.price)"},
             {"name": "searchName", "type": "string", "derivationExpression": "canonical:(name)"},
             {"name": "shout", "type": "string", "derivationExpression": "uppercase:(name)"},
             {"name": "tagCount", "type": "int64", "derivationExpression": "tags.@count"},
             {"name": "touched", "type": "date", "derivationExpression": "now()"}],
           "relationships": [{"name": "items", "destination": "Item", "inverse": "list", "toMany": true},
                             {"name": "tags", "destination": "Tag", "inverse": "lists", "toMany": true}]},
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "price", "type": "double"},
             {"name": "listName", "type": "string", "derivationExpression": "list.name"},
             {"name": "quietListName", "type": "string", "derivationExpression": "lowercase:(list.name)"}],
           "relationships": [{"name": "list", "destination": "List", "inverse": "items"}]},
          {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "lists", "destination": "List", "inverse": "tags", "toMany": true}]}]}
        """

    func source(_ name: String = "lists.sqlite") throws -> (
        path: String, v1: ManagedObjectModel, v2: ManagedObjectModel
    ) {
        let v1 = try ManagedObjectModel(json: Self.v1)
        let v2 = try ManagedObjectModel(json: Self.v2)
        let path = scratch.file(name)
        try makeStore(path, v1) { store in
            let groceries = try insert(store, "List", ["name": .string("Épicerie")])
            let empty = try insert(store, "List", ["name": .string("Empty")])
            let milk = try insert(store, "Item", ["title": .string("milk"), "price": .double(1.5)])
            let bread = try insert(store, "Item", ["title": .string("bread"), "price": .double(2.25)])
            try insert(store, "Item", ["title": .string("stray"), "price": .double(9)])
            try groceries.setValue(.collection([.object(milk), .object(bread)]), forKey: "items")
            let food = try insert(store, "Tag", ["label": .string("food")])
            let home = try insert(store, "Tag", ["label": .string("home")])
            try groceries.setValue(.collection([.object(food), .object(home)]), forKey: "tags")
            try empty.setValue(.collection([.object(home)]), forKey: "tags")
        }
        return (path, v1, v2)
    }

    func rows(_ path: String, _ sql: String) throws -> [String] {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        return try database.rows(sql).map { row in
            row.map { raw -> String in
                switch raw {
                case .real(let d): return String(d)
                case .integer(let i): return String(i)
                default: return raw.text ?? "NULL"
                }
            }.joined(separator: "|")
        }
    }

    func testTheJSONModelReadsAndWritesDerivationExpressions() throws {
        let v2 = try ManagedObjectModel(json: Self.v2)
        XCTAssertEqual(v2.entitiesByName["List"]?.attributesByName["itemCount"]?.derivationExpression, "items.@count")
        XCTAssertEqual(v2.entitiesByName["Item"]?.attributesByName["title"]?.derivationExpression, nil)
        let again = try ManagedObjectModel(json: v2.jsonText())
        XCTAssertEqual(
            again.entitiesByName["Item"]?.attributesByName["quietListName"]?.derivationExpression,
            "lowercase:(list.name)")
        XCTAssertEqual(again.entitiesByName["List"]?.versionHash, v2.entitiesByName["List"]?.versionHash)
    }

    /// Every kind is computed for the migrated rows, both by the SQL path and row by row.
    func testAMigrationComputesDerivedValuesForTheMigratedRows() throws {
        for pushDown in [true, false] {
            let (path, v1, v2) = try source("lists-\(pushDown).sqlite")
            let manager = try MigrationManager(
                sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
            manager.pushDownSQL = pushDown
            let destination = scratch.file("out-\(pushDown).sqlite")
            let before = Date().timeIntervalSinceReferenceDate
            let report = try manager.migrateStore(from: path, to: destination)
            XCTAssertFalse(report.warnings.contains { $0.contains("derived attribute") }, "\(report.warnings)")
            XCTAssertEqual(
                try rows(
                    destination,
                    "SELECT ZNAME, ZITEMCOUNT, ZTOTAL, ZDEAREST, ZSEARCHNAME, ZSHOUT, ZTAGCOUNT FROM ZLIST ORDER BY ZNAME"
                ),
                ["Empty|0|0.0|NULL|empty|EMPTY|1", "Épicerie|2|3.75|2.25|epicerie|ÉPICERIE|2"])
            XCTAssertEqual(
                try rows(destination, "SELECT ZTITLE, ZLISTNAME, ZQUIETLISTNAME FROM ZITEM ORDER BY ZTITLE"),
                ["bread|Épicerie|épicerie", "milk|Épicerie|épicerie", "stray|NULL|NULL"])
            let touched = try rows(destination, "SELECT ZTOUCHED FROM ZLIST").compactMap(Double.init)
            XCTAssertEqual(touched.count, 2)
            XCTAssertTrue(
                touched.allSatisfy { $0 >= before - 1 && $0 <= Date().timeIntervalSinceReferenceDate + 1 }, "\(touched)"
            )
            XCTAssertTrue(report.losses.losses.isEmpty, "\(report.losses.losses)")
        }
    }

    /// `now()` is the time of the save that wrote the row: Core Data's migration writes every row,
    /// so every migrated row carries the time of the migration, also one whose source had a value
    /// (its data statement is `UPDATE T SET C = NSCoreDataNow()`, for every row).
    func testANowDerivationStampsEveryMigratedRowWithTheTimeOfTheMigration() throws {
        let v1 = try ManagedObjectModel(
            json:
                #"{"entities": [{"name": "Doc", "attributes": [{"name": "title", "type": "string"}, {"name": "touched", "type": "date"}]}]}"#
        )
        let v2 = try ManagedObjectModel(
            json:
                #"{"entities": [{"name": "Doc", "attributes": [{"name": "title", "type": "string"}, {"name": "touched", "type": "date", "derivationExpression": "now()"}]}]}"#
        )
        for pushDown in [true, false] {
            let path = scratch.file("docs-\(pushDown).sqlite")
            try makeStore(path, v1) { store in
                try insert(store, "Doc", ["title": .string("old"), "touched": .date(1000)])
                try insert(store, "Doc", ["title": .string("never")])
            }
            let manager = try MigrationManager(
                sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
            manager.pushDownSQL = pushDown
            let destination = scratch.file("docs-out-\(pushDown).sqlite")
            let before = Date().timeIntervalSinceReferenceDate
            try manager.migrateStore(from: path, to: destination)
            let after = Date().timeIntervalSinceReferenceDate
            let stamps = try rows(destination, "SELECT ZTOUCHED FROM ZDOC ORDER BY ZTITLE").compactMap(Double.init)
            XCTAssertEqual(stamps.count, 2)
            XCTAssertTrue(stamps.allSatisfy { $0 >= before - 1 && $0 <= after + 1 }, "pushDown \(pushDown): \(stamps)")
        }
    }

    /// The destination has Core Data's triggers, by name, and they keep the values right when the
    /// store is written afterwards.
    func testTheDestinationHasCoreDatasTriggersAndTheyMaintainTheValues() throws {
        let (path, v1, v2) = try source()
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        let destination = scratch.file("out.sqlite")
        try manager.migrateStore(from: path, to: destination)
        let names = Set(try rows(destination, "SELECT name FROM sqlite_master WHERE type = 'trigger'"))
        let tagTable = try rows(
            destination,
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')"
        )
        XCTAssertEqual(tagTable.count, 1, "\(tagTable)")
        let join = tagTable.first ?? ""
        let expected: Set<String> = [
            "Z_DA_ZITEM_List_itemCount_PARAMETER_INSERT", "Z_DA_ZITEM_List_itemCount_PARAMETER_UPDATE_INCREMENT",
            "Z_DA_ZITEM_List_itemCount_PARAMETER_UPDATE_DECREMENT", "Z_DA_ZITEM_List_itemCount_PARAMETER_DELETE",
            "Z_DA_ZLIST_List_itemCount_SOURCE_INSERT",
            "Z_DA_ZITEM_List_total_PARAMETER_INSERT", "Z_DA_ZITEM_List_total_PARAMETER_UPDATE_INCREMENT",
            "Z_DA_ZITEM_List_total_PARAMETER_UPDATE_DECREMENT", "Z_DA_ZITEM_List_total_PARAMETER_DELETE",
            "Z_DA_ZLIST_List_total_SOURCE_INSERT",
            "Z_DA_ZITEM_List_dearest_INSERT", "Z_DA_ZITEM_List_dearest_UPDATE_SET",
            "Z_DA_ZITEM_List_dearest_UPDATE_UNSET",
            "Z_DA_ZITEM_List_dearest_DELETE", "Z_DA_ZLIST_List_dearest_INSERT",
            "Z_DA_ZLIST_List_searchName_INSERT", "Z_DA_ZLIST_List_searchName_UPDATE",
            "Z_DA_ZLIST_List_shout_INSERT", "Z_DA_ZLIST_List_shout_UPDATE",
            "Z_DA_\(join)_List_tagCount_PARAMETER_INSERT", "Z_DA_\(join)_List_tagCount_PARAMETER_DELETE",
            "Z_DA_ZLIST_List_tagCount_SOURCE_INSERT",
            "Z_DA_ZLIST_List_touched_INSERT", "Z_DA_ZLIST_List_touched_UPDATE",
            "Z_DA_ZITEM_Item_listName_SOURCE_INSERT", "Z_DA_ZITEM_Item_listName_SOURCE_UPDATE",
            "Z_DA_ZLIST_Item_listName_PARAMETER_INSERT", "Z_DA_ZLIST_Item_listName_PARAMETER_UPDATE",
            "Z_DA_ZITEM_Item_quietListName_SOURCE_INSERT", "Z_DA_ZITEM_Item_quietListName_SOURCE_UPDATE",
            "Z_DA_ZLIST_Item_quietListName_PARAMETER_INSERT", "Z_DA_ZLIST_Item_quietListName_PARAMETER_UPDATE",
        ]
        XCTAssertEqual(names, expected)
        // The text of one, as Core Data writes it (the now() update trigger; SQLite keeps the
        // statement without its IF NOT EXISTS).
        XCTAssertEqual(
            try rows(destination, "SELECT sql FROM sqlite_master WHERE name = 'Z_DA_ZLIST_List_touched_UPDATE'"),
            [
                "CREATE TRIGGER Z_DA_ZLIST_List_touched_UPDATE AFTER UPDATE OF Z_OPT ON ZLIST FOR EACH ROW BEGIN UPDATE ZLIST SET ZTOUCHED = NSCoreDataNow() WHERE Z_PK = NEW.Z_PK; SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZLIST', Z_ENT, Z_PK, 'touched', ZTOUCHED) FROM ZLIST WHERE Z_PK = NEW.Z_PK; END"
            ])

        // Written afterwards (cdmigrate's connections know Core Data's trigger functions).
        let database = try SQLiteDatabase(path: destination, mode: .readWrite)
        try database.exec(
            """
            UPDATE ZITEM SET ZLIST = (SELECT Z_PK FROM ZLIST WHERE ZNAME = 'Empty'), ZPRICE = 4 WHERE ZTITLE = 'stray';
            DELETE FROM ZITEM WHERE ZTITLE = 'milk';
            UPDATE ZLIST SET ZNAME = 'Maison' WHERE ZNAME = 'Empty';
            DELETE FROM \(join) WHERE rowid IN (SELECT rowid FROM \(join) LIMIT 1);
            """)
        database.close()
        XCTAssertEqual(
            try rows(
                destination, "SELECT ZNAME, ZITEMCOUNT, ZTOTAL, ZDEAREST, ZSEARCHNAME, ZSHOUT FROM ZLIST ORDER BY ZNAME"
            ),
            ["Maison|1|4.0|4.0|maison|MAISON", "Épicerie|1|2.25|2.25|epicerie|ÉPICERIE"])
        XCTAssertEqual(try rows(destination, "SELECT SUM(ZTAGCOUNT) FROM ZLIST"), ["2"])
        XCTAssertEqual(
            try rows(destination, "SELECT ZTITLE, ZLISTNAME, ZQUIETLISTNAME FROM ZITEM ORDER BY ZTITLE"),
            ["bread|Épicerie|épicerie", "stray|Maison|maison"])
    }

    /// An expression Core Data does not maintain in SQL keeps the mapped values and is named in a warning.
    func testAnUnsupportedDerivationIsNamedInAWarning() throws {
        let v1 = try ManagedObjectModel(
            json: """
                {"entities": [{"name": "A", "attributes": [{"name": "x", "type": "int64"}]}]}
                """)
        let v2 = try ManagedObjectModel(
            json: """
                {"entities": [{"name": "A", "attributes": [{"name": "x", "type": "int64"},
                   {"name": "twice", "type": "int64", "derivationExpression": "x * 2"}]}]}
                """)
        let path = scratch.file("a.sqlite")
        try makeStore(path, v1) { try insert($0, "A", ["x": .integer(3)]) }
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        let report = try manager.migrateStore(from: path, to: scratch.file("a2.sqlite"))
        XCTAssertTrue(
            report.warnings.contains {
                $0.hasPrefix("derived attribute 'A.twice' keeps the values the mapping gave it and gets no trigger")
            }, "\(report.warnings)")
        XCTAssertEqual(
            try rows(scratch.file("a2.sqlite"), "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"), ["0"])
    }

    /// A derived attribute of a subentity sharing its parent's table restricts Core Data's SQL to
    /// its own `Z_ENT`s; the parent's rows keep nil.
    func testASubentitysDerivedAttributeTouchesOnlyItsOwnRows() throws {
        let json = { (derived: String) in
            """
            {"entities": [{"name": "Shape", "attributes": [{"name": "label", "type": "string"}\(derived)]},
                          {"name": "Circle", "parent": "Shape", "attributes": [{"name": "tag", "type": "string"}]}]}
            """
        }
        let v1 = try ManagedObjectModel(json: json(""))
        let v2 = try ManagedObjectModel(
            json: """
                {"entities": [{"name": "Shape", "attributes": [{"name": "label", "type": "string"}]},
                              {"name": "Circle", "parent": "Shape", "attributes": [{"name": "tag", "type": "string"},
                                 {"name": "loud", "type": "string", "derivationExpression": "uppercase:(label)"}]}]}
                """)
        let path = scratch.file("s.sqlite")
        try makeStore(path, v1) { store in
            try insert(store, "Shape", ["label": .string("plain")])
            try insert(store, "Circle", ["label": .string("round")])
        }
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        let out = scratch.file("s2.sqlite")
        try manager.migrateStore(from: path, to: out)
        XCTAssertEqual(
            try rows(out, "SELECT ZLABEL, ZLOUD FROM ZSHAPE ORDER BY ZLABEL"), ["plain|NULL", "round|ROUND"])
        let circle = v2.entitiesByName["Circle"]?.entityNumber ?? 0
        XCTAssertEqual(
            try rows(out, "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"),
            ["Z_DA_ZSHAPE_Circle_loud_INSERT", "Z_DA_ZSHAPE_Circle_loud_UPDATE"])
        XCTAssertGreaterThan(circle, 0)
    }

    /// A compiled model (`.mom`) archives a derived attribute as an NSDerivedAttributeDescription
    /// whose `NSDerivationExpression` is an archived NSExpression: read into the expression's text.
    func testACompiledModelsDerivedAttributeKeepsItsExpression() throws {
        let b = KeyedArchiveBuilder()
        let modelSlot = b.reserve()
        let entitySlot = b.reserve()
        let name = b.instance(
            ["NSAttributeDescription", "NSPropertyDescription"],
            [
                ("NSPropertyName", b.string("name")), ("NSEntity", entitySlot), ("NSAttributeType", .integer(700)),
                ("NSIsOptional", .bool(true)),
            ])
        let keyPath = b.instance(
            ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression"],
            [
                ("NSOperand", b.instance(["NSSelfExpression", "NSExpression"], [])),
                (
                    "NSArguments",
                    b.array([
                        b.instance(["NSKeyPathSpecifierExpression", "NSExpression"], [("NSKeyPath", b.string("name"))])
                    ])
                ),
            ])
        let function = b.instance(
            ["NSFunctionExpression", "NSExpression"],
            [
                (
                    "NSOperand",
                    b.instance(
                        ["NSConstantValueExpression", "NSExpression"], [("NSConstantValue", b.string("NSExpression"))])
                ),
                ("NSSelectorName", b.string("lowercase:")), ("NSArguments", b.array([keyPath])),
            ])
        let lower = b.instance(
            ["NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription"],
            [
                ("NSPropertyName", b.string("lower")), ("NSEntity", entitySlot), ("NSAttributeType", .integer(700)),
                ("NSIsOptional", .bool(true)),
                ("NSDerivationExpression", function),
            ])
        b.instance(
            ["NSEntityDescription"],
            [
                ("NSEntityName", b.string("Doc")), ("NSManagedObjectModel", modelSlot),
                ("NSProperties", b.dictionary([(b.string("name"), name), (b.string("lower"), lower)])),
            ], slot: entitySlot)
        b.instance(
            ["NSManagedObjectModel"], [("NSEntities", b.dictionary([(b.string("Doc"), entitySlot)]))], slot: modelSlot)
        let model = try CompiledModelReader.model(fromArchive: b.archive(root: modelSlot), name: "Docs")
        XCTAssertEqual(model.entity(named: "Doc")?.attribute(named: "lower")?.derivationExpression, "lowercase:(name)")
        XCTAssertNil(model.entity(named: "Doc")?.attribute(named: "name")?.derivationExpression)
    }

    /// Xcode's XML: `derived="YES"` with `derivationExpression` is read and computed by a migration.
    func testAnXcodeModelsDerivedAttributeIsComputed() throws {
        let folder = scratch.file("Docs.xcdatamodel")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Doc" representedClassName="Doc" syncable="YES" codeGenerationType="class">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="searchName" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(name)"/>
            </entity>
        </model>
        """.write(toFile: folder + "/contents", atomically: true, encoding: .utf8)
        let v2 = try ManagedObjectModel(contentsOf: folder)
        XCTAssertEqual(
            v2.entity(named: "Doc")?.attribute(named: "searchName")?.derivationExpression, "canonical:(name)")
        let v1 = try ManagedObjectModel(
            json: """
                {"entities": [{"name": "Doc", "attributes": [{"name": "name", "type": "string"}]}]}
                """)
        let path = scratch.file("docs.sqlite")
        try makeStore(path, v1) { try insert($0, "Doc", ["name": .string("Ça Va")]) }
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        try manager.migrateStore(from: path, to: scratch.file("docs2.sqlite"))
        XCTAssertEqual(try rows(scratch.file("docs2.sqlite"), "SELECT ZSEARCHNAME FROM ZDOC"), ["ca va"])
    }

    func testCanonicalIsAFunctionOfExpressions() throws {
        let expression = try ExpressionParser.parseExpression("canonical:(\"Crème Brûlée\")")
        XCTAssertEqual(try ExpressionEvaluator.evaluate(expression), .string("creme brulee"))
    }
}
