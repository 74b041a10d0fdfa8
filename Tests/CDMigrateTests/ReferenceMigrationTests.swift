import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// The five reference migrations of examples/scenarios.md, each checked row by row against its
/// source store as the scenario's "Must show" asks.
final class ReferenceMigrationTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        directory = try TemporaryDirectory.make(prefix: "cdmigrate-reftest")
    }

    override func tearDown() {
        TemporaryDirectory.remove(directory)
    }

    func path(_ name: String) -> String { directory + "/" + name }

    // MARK: 1. Notas

    func testNotasEachDistinctCategoryStringBecomesOneCategoria() throws {
        let source = path("Notas-v2.sqlite")
        let destination = path("Notas-v3.sqlite")
        try NotasCategorias.generateSource(at: source)
        struct Row {
            var contenido: String
            var fecha: Value
            var etiquetas: Value
            var categoria: String?
        }
        let rows: [Row] = try StoreAccess.readStore(at: source, model: try NotasCategorias.sourceModel()) { store in
            try StoreAccess.all("Nota", in: store).map {
                Row(
                    contenido: try $0.string("contenido") ?? "", fecha: try $0.value(forKey: "fecha"),
                    etiquetas: try $0.value(forKey: "etiquetas"), categoria: try $0.string("categoria"))
            }
        }
        XCTAssertEqual(rows.count, 800)
        let expectedNames = Set(rows.compactMap { $0.categoria }.filter { !$0.isEmpty })
        XCTAssertGreaterThan(expectedNames.count, 10, "the generator should use most categories")
        XCTAssertTrue(
            rows.contains { $0.categoria == nil } && rows.contains { $0.categoria == "" },
            "the generator should make notes without a category")

        let report = try NotasCategorias.manager().migrateStore(from: source, to: destination)
        XCTAssertTrue(report.untakenSourceInstances.isEmpty, "\(report.untakenSourceInstances)")

        try StoreAccess.readStore(at: destination, model: try NotasCategorias.destinationModel()) { store in
            let categorias = try StoreAccess.all("Categoria", in: store)
            let names = try categorias.map { try $0.string("nombre") ?? "" }
            XCTAssertEqual(names.count, Set(names).count, "duplicate Categoria: \(names.sorted())")
            XCTAssertEqual(Set(names), expectedNames)

            let notas = try StoreAccess.all("Nota", in: store)
            XCTAssertEqual(notas.count, rows.count)
            var byContenido: [String: ManagedObject] = [:]
            for nota in notas { byContenido[try nota.string("contenido") ?? ""] = nota }
            XCTAssertEqual(byContenido.count, rows.count, "contenido values are unique")
            for row in rows {
                guard let nota = byContenido[row.contenido] else {
                    XCTFail("no Nota '\(row.contenido)'")
                    continue
                }
                XCTAssertEqual(try nota.value(forKey: "fecha"), row.fecha, row.contenido)
                XCTAssertEqual(try nota.value(forKey: "etiquetas"), row.etiquetas, row.contenido)
                let linked = try nota.objects("categorias").map { try $0.string("nombre") ?? "" }
                if let categoria = row.categoria, !categoria.isEmpty {
                    XCTAssertEqual(linked, [categoria], row.contenido)
                } else {
                    XCTAssertEqual(linked, [], "'\(row.contenido)' had no category")
                }
            }
            // The inverse: each Categoria's notas are exactly the notes that had its string.
            for categoria in categorias {
                let nombre = try categoria.string("nombre") ?? ""
                let notasOf = try categoria.objects("notas")
                XCTAssertEqual(
                    Set(try notasOf.map { try $0.string("contenido") ?? "" }),
                    Set(rows.filter { $0.categoria == nombre }.map { $0.contenido }), nombre)
                for nota in notasOf {
                    XCTAssertTrue(
                        try nota.objects("categorias").contains { $0.objectID == categoria.objectID },
                        "inverse of \(nombre)")
                }
            }
        }
    }

    // MARK: 2. Recipes

    func testMigrationFunctionsSplitNames() {
        XCTAssertEqual(MigrationFunctions.firstName("Jiro Ono"), "Jiro")
        XCTAssertEqual(MigrationFunctions.lastName("Jiro Ono"), "Ono")
        XCTAssertEqual(MigrationFunctions.firstName("Juan Mari Arzak"), "Juan")
        XCTAssertEqual(MigrationFunctions.lastName("Juan Mari Arzak"), "Mari Arzak")
        XCTAssertEqual(MigrationFunctions.firstName("Madonna"), "Madonna")
        XCTAssertEqual(MigrationFunctions.lastName("Madonna"), "")
        XCTAssertEqual(MigrationFunctions.firstName(""), "")
        XCTAssertEqual(MigrationFunctions.lastName(""), "")
        XCTAssertEqual(MigrationFunctions.firstName("山田　太郎"), "山田")
        XCTAssertEqual(MigrationFunctions.lastName("山田　太郎"), "太郎")
        XCTAssertEqual(MigrationFunctions.firstName("  Gordon   Ramsay "), "Gordon")
        XCTAssertEqual(MigrationFunctions.lastName("  Gordon   Ramsay "), "Ramsay")
        // Every White_Space scalar separates (tab, no-break space, line breaks, U+3000); U+200B does not.
        XCTAssertEqual(MigrationFunctions.firstName("\tJiro\u{A0}\u{3000}Ono\n"), "Jiro")
        XCTAssertEqual(MigrationFunctions.lastName("\tJiro\u{A0}\u{3000}Ono\n"), "Ono")
        XCTAssertEqual(MigrationFunctions.firstName("Zero\u{200B}Width"), "Zero\u{200B}Width")
        XCTAssertEqual(MigrationFunctions.lastName("Line\r\nBreak"), "Break")
        XCTAssertEqual(MigrationFunctions.firstName(" \u{3000} "), "")
        // Scalars, not Characters: a space before a combining mark still separates (as in C and Python).
        XCTAssertEqual(MigrationFunctions.lastName("Jos \u{301}e"), "\u{301}e")
    }

    func testCategoriaNamesAreComparedAndStoredInNFC() throws {
        let source = path("Notas-v2.sqlite")
        let destination = path("Notas-v3.sqlite")
        try StoreAccess.createStore(at: source, model: try NotasCategorias.sourceModel()) { store in
            for (i, categoria) in ["Mu\u{301}sica", "Música", "An\u{303}o nuevo", "Trabajo", "trabajo"].enumerated() {
                let nota = try store.insertObject(entityName: "Nota")
                try nota.setValue(.string("Nota \(i)"), forKey: "contenido")
                try nota.setValue(.date(Double(i)), forKey: "fecha")
                try nota.setValue(.string(categoria), forKey: "categoria")
            }
        }
        _ = try NotasCategorias.manager().migrateStore(from: source, to: destination)
        let names: [[UInt8]] = try StoreAccess.readStore(at: destination, model: try NotasCategorias.destinationModel())
        { store in
            try StoreAccess.all("Categoria", in: store).map { Array((try $0.string("nombre") ?? "").utf8) }
        }
        // Compared as bytes: Swift's == would take NFD for NFC.
        XCTAssertEqual(Set(names), Set(["Música", "Año nuevo", "Trabajo", "trabajo"].map { Array($0.utf8) }))
        XCTAssertEqual(names.count, 4)
    }

    func testRecipesNamesSplitRelationshipsRepointedOneCuisinePerString() throws {
        let source = path("Recipes-v1.sqlite")
        let destination = path("Recipes-v2.sqlite")
        try Recipes.generateSource(at: source)
        struct RecipeRow {
            var name: String
            var directions: String?
            var cuisine: String?
            var chef: String??
            var ingredients: Set<String>
        }
        struct ChefRow {
            var name: String?
            var recipes: Set<String>
        }
        let (recipes, chefs, ingredientRecipes): ([RecipeRow], [ChefRow], [String: Set<String>]) =
            try StoreAccess.readStore(at: source, model: try Recipes.sourceModel()) { store in
                let recipes = try StoreAccess.all("Recipe", in: store).map { r -> RecipeRow in
                    let chef = try r.value(forKey: "chef").object
                    return RecipeRow(
                        name: try r.string("name") ?? "", directions: try r.string("directions"),
                        cuisine: try r.string("cuisine"),
                        chef: chef.map { try? $0.string("name") },
                        ingredients: Set(try r.objects("ingredients").map { try $0.string("name") ?? "" }))
                }
                let chefs = try StoreAccess.all("Chef", in: store).map {
                    ChefRow(
                        name: try $0.string("name"),
                        recipes: Set(try $0.objects("recipes").map { try $0.string("name") ?? "" }))
                }
                var ingredientRecipes: [String: Set<String>] = [:]
                for i in try StoreAccess.all("Ingredient", in: store) {
                    ingredientRecipes[try i.string("name") ?? ""] = Set(
                        try i.objects("recipes").map { try $0.string("name") ?? "" })
                }
                return (recipes, chefs, ingredientRecipes)
            }
        XCTAssertEqual(recipes.count, 300)
        XCTAssertEqual(Set(recipes.map { $0.name }).count, 300, "recipe names are unique")
        XCTAssertEqual(chefs.count, Recipes.chefNames.count)

        let report = try Recipes.manager().migrateStore(from: source, to: destination)
        XCTAssertTrue(report.untakenSourceInstances.isEmpty, "\(report.untakenSourceInstances)")

        func split(_ name: String??) -> [String?] {
            guard let name = name else { return [] }  // no chef
            guard let name = name else { return [nil, nil] }  // a chef without a name
            return [MigrationFunctions.firstName(name), MigrationFunctions.lastName(name)]
        }
        try StoreAccess.readStore(at: destination, model: try Recipes.destinationModel()) { store in
            // Chefs: names split, one destination chef per source chef, their recipes re-pointed.
            let newChefs = try StoreAccess.all("Chef", in: store)
            XCTAssertEqual(newChefs.count, chefs.count)
            var chefsByName: [[String?]: ManagedObject] = [:]
            for chef in newChefs { chefsByName[[try chef.string("firstName"), try chef.string("lastName")]] = chef }
            for (first, last) in [
                ("Juan", "Mari Arzak"), ("Madonna", ""), ("", ""), ("山田", "太郎"), ("Jiro", "Ono"), ("Gordon", "Ramsay"),
            ] {
                XCTAssertNotNil(chefsByName[[first, last]], "no chef \(first) / \(last)")
            }
            XCTAssertNotNil(chefsByName[[nil, nil]], "the chef without a name keeps no name")
            for chef in chefs {
                let key = split(.some(chef.name))
                guard let newChef = chefsByName[key] else {
                    XCTFail("no chef \(key)")
                    continue
                }
                XCTAssertEqual(
                    Set(try newChef.objects("recipes").map { try $0.string("name") ?? "" }), chef.recipes, "\(key)")
            }
            // Recipes: attributes, rating left empty, ingredients, chef and cuisines re-pointed.
            let newRecipes = try StoreAccess.all("Recipe", in: store)
            XCTAssertEqual(newRecipes.count, recipes.count)
            var byName: [String: ManagedObject] = [:]
            for r in newRecipes { byName[try r.string("name") ?? ""] = r }
            for row in recipes {
                guard let r = byName[row.name] else {
                    XCTFail("no recipe \(row.name)")
                    continue
                }
                XCTAssertEqual(try r.string("directions"), row.directions)
                XCTAssertEqual(try r.value(forKey: "rating"), .null)
                XCTAssertEqual(
                    Set(try r.objects("ingredients").map { try $0.string("name") ?? "" }), row.ingredients, row.name)
                XCTAssertEqual(
                    try r.objects("cuisines").map { try $0.string("name") },
                    row.cuisine.flatMap { $0.isEmpty ? nil : [$0] } ?? [], row.name)
                let chef = try r.value(forKey: "chef").object
                XCTAssertEqual(
                    try chef.map { [try $0.string("firstName"), try $0.string("lastName")] } ?? [], split(row.chef),
                    row.name)
                for ingredient in try r.objects("ingredients") {
                    XCTAssertTrue(
                        try ingredient.objects("recipes").contains { $0.objectID == r.objectID },
                        "inverse ingredient → \(row.name)")
                }
            }
            // Cuisines: one per distinct non-empty string, each with exactly its recipes.
            let cuisines = try StoreAccess.all("Cuisine", in: store)
            let cuisineNames = try cuisines.map { try $0.string("name") ?? "" }
            XCTAssertEqual(cuisineNames.count, Set(cuisineNames).count, "duplicate Cuisine: \(cuisineNames.sorted())")
            XCTAssertEqual(Set(cuisineNames), Set(recipes.compactMap { $0.cuisine }.filter { !$0.isEmpty }))
            for cuisine in cuisines {
                let name = try cuisine.string("name") ?? ""
                XCTAssertEqual(
                    Set(try cuisine.objects("recipes").map { try $0.string("name") ?? "" }),
                    Set(recipes.filter { $0.cuisine == name }.map { $0.name }), name)
            }
            // Ingredients: unchanged, with their recipes re-pointed.
            let ingredients = try StoreAccess.all("Ingredient", in: store)
            XCTAssertEqual(ingredients.count, ingredientRecipes.count)
            for ingredient in ingredients {
                let name = try ingredient.string("name") ?? ""
                XCTAssertEqual(
                    Set(try ingredient.objects("recipes").map { try $0.string("name") ?? "" }), ingredientRecipes[name],
                    name)
                XCTAssertNotNil(try ingredient.string("amount"))
            }
        }
    }

    // MARK: 3. Events

    func testMediumDateFormat() {
        XCTAssertEqual(MediumDateFormat.string(fromReferenceSeconds: 0), "Jan 1, 2001 at 12:00:00 AM")
        XCTAssertEqual(MediumDateFormat.string(fromReferenceSeconds: 43_200), "Jan 1, 2001 at 12:00:00 PM")
        XCTAssertEqual(MediumDateFormat.string(fromReferenceSeconds: -978_307_200.5), "Dec 31, 1969 at 11:59:59 PM")
        XCTAssertEqual(
            MediumDateFormat.string(fromReferenceSeconds: 604_627_200 + 3_600 * 13 + 0.25), "Feb 29, 2020 at 1:00:00 PM"
        )
        // The scenario's own example: 2017-09-12 12:55:13 UTC.
        XCTAssertEqual(
            MediumDateFormat.string(fromReferenceSeconds: 1_505_220_913 - 978_307_200), "Sep 12, 2017 at 12:55:13 PM")
        // Past DateFormatter's usual years: seconds since 2001 as a Double, no calendar limit.
        XCTAssertEqual(MediumDateFormat.string(fromReferenceSeconds: 252_423_993_600), "Jan 1, 10000 at 12:00:00 AM")
        XCTAssertEqual(MediumDateFormat.string(fromReferenceSeconds: 299_985_683_696.75), "Mar 4, 11507 at 12:34:56 PM")
        XCTAssertNil(MediumDateFormat.string(fromReferenceSeconds: .infinity))
        XCTAssertNil(MediumDateFormat.string(fromReferenceSeconds: 1e300))
    }

    func testEventsTwoPassesDoubleTheRowsAndConvertExactly() throws {
        let source = path("Events.sqlite")
        let destination = path("Events-v2.sqlite")
        try EventsTwoPasses.generateSource(at: source)
        let stamps: [Double] = try StoreAccess.readStore(at: source, model: try EventsTwoPasses.sourceModel()) {
            store in
            try StoreAccess.all("Event", in: store).map { event -> Double in
                guard case .date(let d) = try event.value(forKey: "timeStamp") else {
                    XCTFail("no date")
                    return .nan
                }
                return d
            }
        }
        XCTAssertEqual(stamps.count, 2_000)
        XCTAssertEqual(Set(stamps).count, 2_000, "different values")
        XCTAssertEqual(stamps.sorted(), EventsTwoPasses.timeStamps().sorted())
        let before = try snapshot(directory)

        let manager = try EventsTwoPasses.manager()
        XCTAssertEqual(manager.mappingModels.map { $0.name }, ["StepOne", "StepTwo"])
        let report = try manager.migrateStore(from: source, to: destination)
        XCTAssertEqual(report.mappings.map { $0.pass }, [0, 1])
        XCTAssertEqual(report.mappings.map { $0.sourceInstances }, [2_000, 2_000])
        XCTAssertTrue(report.untakenSourceInstances.isEmpty)
        XCTAssertEqual(try snapshot(directory, except: ["Events-v2.sqlite"]), before, "the source store is untouched")

        try StoreAccess.readStore(at: destination, model: try EventsTwoPasses.destinationModel()) { store in
            let numeric = try StoreAccess.all("NumericEvent", in: store).map {
                try $0.value(forKey: "timeStamp").doubleValue ?? .nan
            }
            let printed = try StoreAccess.all("PrintedEvent", in: store).map { try $0.string("printedDate") ?? "" }
            XCTAssertEqual(numeric.count + printed.count, 2 * stamps.count, "twice as many rows as the source")
            XCTAssertEqual(numeric.sorted(), stamps.map { $0 + 978_307_200 }.sorted(), "seconds since 1970, exactly")
            XCTAssertEqual(
                printed.sorted(), stamps.map { MediumDateFormat.string(fromReferenceSeconds: $0) ?? "" }.sorted())
            XCTAssertTrue(printed.contains("Dec 31, 1969 at 11:59:59 PM"))
            XCTAssertTrue(printed.contains("Feb 29, 2020 at 1:00:00 PM"))
        }
    }

    func testEventsDestinationIsNeverTheSourceAndTheOldStoreCanBeReplaced() throws {
        let source = path("Events.sqlite")
        try EventsTwoPasses.generateSource(at: source, count: 300)
        let before = try snapshot(directory)
        XCTAssertThrowsError(try EventsTwoPasses.manager().migrateStore(from: source, to: source)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationManagerDestinationStore, "\(error)")
        }
        XCTAssertThrowsError(
            try EventsTwoPasses.manager().migrateStore(from: source, to: directory + "/./Events.sqlite")
        ) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationManagerDestinationStore, "\(error)")
        }
        let existing = path("existing.sqlite")
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: existing))
        XCTAssertThrowsError(try EventsTwoPasses.manager().migrateStore(from: source, to: existing)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationManagerDestinationStore, "\(error)")
            XCTAssertTrue("\(error)".contains("existing.sqlite"), "\(error)")
        }
        XCTAssertEqual(try snapshot(directory, except: ["existing.sqlite"]), before)
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: existing)), Data("not a store".utf8),
            "an existing file is never overwritten")

        // The example's way: migrate into a new file, then put it in the old one's place.
        let runDirectory = path("run")
        try TemporaryDirectory.create(runDirectory)
        let result = try EventsTwoPasses.run(in: runDirectory)
        let replaced = runDirectory + "/Events.sqlite"
        XCTAssertEqual(result.destinationPaths, [replaced])
        XCTAssertEqual(
            TemporaryDirectory.list(runDirectory), ["Events.sqlite"], "the migrated store took the old one's place")
        try StoreAccess.readStore(at: replaced, model: try EventsTwoPasses.destinationModel()) { store in
            XCTAssertEqual(try StoreAccess.all("NumericEvent", in: store).count, 2_000)
            XCTAssertEqual(try StoreAccess.all("PrintedEvent", in: store).count, 2_000)
        }
        XCTAssertThrowsError(
            try PersistentStore.open(
                at: replaced, model: try EventsTwoPasses.sourceModel(), readOnly: true, checkVersion: true)
        ) { error in
            XCTAssertEqual(
                (error as? MigrationError)?.code, .incompatibleVersionHash,
                "the replaced store is a v2 store now: \(error)")
        }
    }

    func testEventsStepOneInRangesGivesTheSameResult() throws {
        let source = path("Events.sqlite")
        let whole = path("whole.sqlite")
        let ranged = path("ranged.sqlite")
        try EventsTwoPasses.generateSource(at: source)
        try EventsTwoPasses.manager().migrateStore(from: source, to: whole)
        let report = try EventsTwoPasses.manager(stepOneInRanges: true).migrateStore(from: source, to: ranged)
        let stamps = EventsTwoPasses.timeStamps()
        XCTAssertEqual(
            report.mappings.map { $0.entityMappingName },
            ["EventToPrintedEventBefore2001", "EventToPrintedEventFrom2001", "EventToNumericEvent"])
        XCTAssertEqual(
            report.mappings.map { $0.sourceInstances },
            [stamps.filter { $0 < 0 }.count, stamps.filter { $0 >= 0 }.count, 2_000])
        XCTAssertTrue(report.untakenSourceInstances.isEmpty)
        func rows(_ path: String) throws -> [String] {
            try StoreAccess.readStore(at: path, model: try EventsTwoPasses.destinationModel()) { store in
                (try StoreAccess.all("NumericEvent", in: store).map { "\(try $0.value(forKey: "timeStamp"))" }
                    + StoreAccess.all("PrintedEvent", in: store).map { try $0.string("printedDate") ?? "" }).sorted()
            }
        }
        XCTAssertEqual(try rows(ranged), try rows(whole))
    }

    func testEventsMigrateInPlace() throws {
        let store = path("Events.sqlite")
        try EventsTwoPasses.generateSource(at: store, count: 500)
        try EventsTwoPasses.manager().migrateStoreInPlace(at: store)
        try StoreAccess.readStore(at: store, model: try EventsTwoPasses.destinationModel()) { s in
            XCTAssertEqual(try StoreAccess.all("NumericEvent", in: s).count, 500)
            XCTAssertEqual(try StoreAccess.all("PrintedEvent", in: s).count, 500)
        }
        XCTAssertEqual(try snapshot(directory).keys.filter { $0.contains("partial") }, [])
    }

    // MARK: 4. UnCloudNotes

    func testPNGImageEncodesAndReadsItsSize() {
        for (w, h) in [(1, 1), (37, 21), (160, 120), (300, 250)] {
            let png = PNGImage.encode(width: w, height: h)
            XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            XCTAssertEqual(PNGImage.size(of: png).map { [$0.width, $0.height] }, [w, h])
        }
        XCTAssertNil(PNGImage.size(of: Array("GIF89a not a png at all, really".utf8)))
        XCTAssertNil(PNGImage.size(of: []))
    }

    /// Width and height straight from the IHDR bytes (independent of PNGImage).
    func ihdrSize(_ bytes: [UInt8]) -> [Double] {
        let w = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let h = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
        return [Double(w), Double(h)]
    }

    func checkV4(_ destination: String, notes: [UnCloudNotes.GeneratedNote], orphans: Bool) throws {
        try StoreAccess.readStore(at: destination, model: try UnCloudNotes.model(version: 4)) { store in
            let newNotes = try StoreAccess.all("Note", in: store)
            XCTAssertEqual(newNotes.count, notes.count)
            var byTitle: [String: ManagedObject] = [:]
            for n in newNotes { byTitle[try n.string("title") ?? ""] = n }
            var widths = Set<Double>()
            for g in notes {
                guard let note = byTitle[g.title] else {
                    XCTFail("no note \(g.title)")
                    continue
                }
                XCTAssertEqual(try note.string("body"), g.body)
                XCTAssertEqual(try note.value(forKey: "dateCreated"), g.dateCreated.map { .date($0) } ?? .null, g.title)
                XCTAssertEqual(try note.value(forKey: "displayIndex"), .integer(g.displayIndex))
                let attachments = try note.objects("attachments")
                XCTAssertEqual(attachments.count, g.images.count, g.title)
                let imageAttachments = attachments.filter { $0.entity.name == "ImageAttachment" }
                XCTAssertEqual(imageAttachments.count, g.images.compactMap { $0 }.count, g.title)
                let expectedCaption = String(g.body.prefix(80))
                var images: [[UInt8]] = []
                for attachment in imageAttachments {
                    guard case .binary(let bytes) = try attachment.value(forKey: "image") else {
                        XCTFail("no image in \(g.title)")
                        continue
                    }
                    images.append(bytes)
                    XCTAssertEqual(
                        [
                            try attachment.value(forKey: "width").doubleValue ?? -1,
                            try attachment.value(forKey: "height").doubleValue ?? -1,
                        ], ihdrSize(bytes), g.title)
                    widths.insert(try attachment.value(forKey: "width").doubleValue ?? -1)
                    XCTAssertEqual(try attachment.string("caption"), expectedCaption, g.title)
                    XCTAssertEqual(try attachment.value(forKeyPath: "note.title"), .string(g.title))
                    XCTAssertNotEqual(try attachment.value(forKey: "dateCreated"), .null)
                }
                XCTAssertEqual(
                    images.sorted { $0.lexicographicallyPrecedes($1) },
                    g.images.compactMap { $0 }.sorted { $0.lexicographicallyPrecedes($1) }, g.title)
                for attachment in attachments where attachment.entity.name == "Attachment" {
                    XCTAssertNotEqual(try attachment.value(forKey: "dateCreated"), .null)
                }
            }
            if notes.contains(where: { !$0.images.isEmpty }) {
                XCTAssertGreaterThan(widths.count, 20, "image sizes vary")
            }
            let imageCount = notes.reduce(0) { $0 + $1.images.compactMap { $0 }.count }
            let plainCount = notes.reduce(0) { $0 + $1.images.filter { $0 == nil }.count }
            let all = try StoreAccess.all("Attachment", in: store)
            let imageAttachments = try StoreAccess.all("ImageAttachment", in: store)
            let plain = try StoreAccess.all("Attachment", in: store, exact: true)
            XCTAssertEqual(imageAttachments.count, imageCount + (orphans ? 1 : 0))
            XCTAssertEqual(plain.count, plainCount + (orphans ? 1 : 0))
            XCTAssertEqual(
                all.count, imageAttachments.count + plain.count, "a fetch of Attachment includes ImageAttachment")
            if orphans {
                let lonely = try imageAttachments.filter { try $0.value(forKey: "note").isNull }
                XCTAssertEqual(lonely.count, 1)
                XCTAssertEqual(try lonely.first?.string("caption"), "")
                XCTAssertEqual(try lonely.first?.value(forKey: "width"), .double(7))
                XCTAssertEqual(try lonely.first?.value(forKey: "height"), .double(3))
            }
        }
    }

    func testUnCloudNotesV3ToV4ImageAttachmentsWithSizeAndCaption() throws {
        let source = path("UnCloudNotes-v3.sqlite")
        let destination = path("UnCloudNotes-v4.sqlite")
        let notes = try UnCloudNotes.generateSource(version: 3, at: source)
        XCTAssertTrue(
            notes.contains { $0.body.isEmpty } && notes.contains { $0.body.count == 80 }
                && notes.contains { $0.body.count == 81 })
        XCTAssertTrue(
            notes.contains { !$0.body.isEmpty && $0.body.count < 80 && !$0.images.isEmpty }, "short bodies with images")
        XCTAssertTrue(
            notes.contains {
                $0.body.count > 80 && $0.body.unicodeScalars.count != $0.body.count && !$0.images.isEmpty
            }, "long bodies with emoji")
        let report = try UnCloudNotes.manager(from: 3).migrateStore(from: source, to: destination)
        XCTAssertTrue(report.untakenSourceInstances.isEmpty, "\(report.untakenSourceInstances)")
        XCTAssertEqual(try UnCloudNotes.version(ofStoreAt: destination), 4)
        try checkV4(destination, notes: notes, orphans: true)
    }

    func testUnCloudNotesAnyVersionReachesV4() throws {
        for version in [1, 2, 3] {
            let source = path("UnCloudNotes-v\(version).sqlite")
            let destination = path("UnCloudNotes-v\(version)-to-v4.sqlite")
            let notes = try UnCloudNotes.generateSource(version: version, at: source, count: 120)
            XCTAssertEqual(try UnCloudNotes.version(ofStoreAt: source), version)
            let reports = try UnCloudNotes.migrateToV4(storeAt: source, destination: destination)
            XCTAssertEqual(reports.map { $0.label }, (version..<4).map { "v\($0) -> v\($0 + 1)" })
            XCTAssertEqual(try UnCloudNotes.version(ofStoreAt: destination), 4)
            try checkV4(destination, notes: notes, orphans: version == 3)
        }
        let left = try snapshot(directory).keys.filter { $0.contains("step") || $0.contains("partial") }
        XCTAssertEqual(left, [], "intermediate stores are removed")
        XCTAssertThrowsError(
            try UnCloudNotes.migrateToV4(
                storeAt: path("UnCloudNotes-v1-to-v4.sqlite"), destination: path("again.sqlite")))
    }

    // MARK: 5. International users

    struct UserRow: Hashable {
        var entity: String
        var name: String
        var city: String
    }

    func users(in path: String) throws -> [UserRow] {
        try StoreAccess.readStore(at: path, model: try InternationalUsers.destinationModel()) { store in
            var rows: [UserRow] = []
            for entity in ["SwedenUser", "FinlandUser"] {
                for user in try StoreAccess.all(entity, in: store) {
                    rows.append(
                        UserRow(
                            entity: entity, name: try user.string("name") ?? "", city: try user.string("city") ?? ""))
                }
            }
            return rows
        }
    }

    func testInternationalUsersSplitByCountryWithPoliciesAndWithoutCode() throws {
        let source = path("Users-v1.sqlite")
        try InternationalUsers.generateSource(at: source)
        let sourceRows: [(name: String, city: String, country: String)] = try StoreAccess.readStore(
            at: source, model: try InternationalUsers.sourceModel()
        ) { store in
            try StoreAccess.all("InternationalUser", in: store).map {
                (try $0.string("name") ?? "", try $0.string("city") ?? "", try $0.string("country") ?? "")
            }
        }
        XCTAssertEqual(sourceRows.count, 2_000)
        var expected: [UserRow] = []
        for row in sourceRows {
            switch row.country {
            case "Sweden":
                expected.append(
                    UserRow(entity: "SwedenUser", name: row.name, city: row.city == "Trosa" ? "Nora" : row.city))
            case "Finland":
                expected.append(
                    UserRow(entity: "FinlandUser", name: row.name, city: row.city == "Turku" ? "Åbo" : row.city))
            default: break
            }
        }
        let others = sourceRows.filter { $0.country != "Sweden" && $0.country != "Finland" }.count
        XCTAssertGreaterThan(others, 0)
        // The data must exercise every case: replaced, kept, and a matching city in the wrong country.
        XCTAssertTrue(sourceRows.contains { $0.country == "Sweden" && $0.city == "Trosa" })
        XCTAssertTrue(sourceRows.contains { $0.country == "Finland" && $0.city == "Trosa" })
        XCTAssertTrue(sourceRows.contains { $0.country == "Finland" && $0.city == "Turku" })
        XCTAssertTrue(sourceRows.contains { $0.country == "Norway" && $0.city == "Trosa" })

        let withPolicies = path("Users-v2-policies.sqlite")
        let withoutCode = path("Users-v2-no-code.sqlite")
        for (manager, destination) in [
            (try InternationalUsers.policyManager(), withPolicies),
            (try InternationalUsers.noCodeManager(), withoutCode),
        ] {
            let report = try manager.migrateStore(from: source, to: destination)
            XCTAssertEqual(report.untakenSourceInstances.map { $0.entityName }, ["InternationalUser"], destination)
            XCTAssertEqual(
                report.untakenSourceInstances.first?.count, others, "users of other countries are reported as not taken"
            )
            let counts = Dictionary(report.destinationCounts.map { ($0.entityName, $0.count) }, uniquingKeysWith: +)
            XCTAssertEqual(counts["SwedenUser"], sourceRows.filter { $0.country == "Sweden" }.count)
            XCTAssertEqual(counts["FinlandUser"], sourceRows.filter { $0.country == "Finland" }.count)
            let rows = try users(in: destination)
            XCTAssertEqual(rows.count, expected.count)
            XCTAssertEqual(Set(rows), Set(expected), destination)
            XCTAssertFalse(rows.contains { $0.entity == "SwedenUser" && $0.city == "Trosa" })
            XCTAssertTrue(
                rows.contains { $0.entity == "FinlandUser" && $0.city == "Trosa" },
                "Trosa is replaced only for Swedish users")
        }
        XCTAssertEqual(
            Set(try users(in: withPolicies)), Set(try users(in: withoutCode)),
            "the no-code mapping gives the same result")
    }

    func testANilCityStaysNilSoValidationFailsWithAndWithoutCode() throws {
        let source = path("Users-v1.sqlite")
        try StoreAccess.createStore(at: source, model: try InternationalUsers.sourceModel()) { store in
            let user = try store.insertObject(entityName: "InternationalUser")
            try user.setValue(.string("Astrid"), forKey: "name")
            try user.setValue(.string("Sweden"), forKey: "country")
        }
        for (label, manager) in [
            ("policies", try InternationalUsers.policyManager()), ("no code", try InternationalUsers.noCodeManager()),
        ] {
            XCTAssertThrowsError(try manager.migrateStore(from: source, to: path("Users-v2-\(label).sqlite")), label) {
                error in
                XCTAssertEqual((error as? MigrationError)?.code.rawValue, 1570, "\(label): \(error)")
            }
        }
    }

    // MARK: Safety

    /// A SwedenUserMapping that fails on its 700th user.
    final class FailingSwedenUserMapping: CountryUserMapping {
        var seen = 0
        init() { super.init(country: "Sweden", entityName: "SwedenUser", replacing: "Trosa", with: "Nora") }
        struct Boom: Error, CustomStringConvertible { var description: String { "the disk of user 700 is on fire" } }
        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            seen += 1
            if seen == 700 { throw Boom() }
            try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
    }

    func testAPolicyFailingHalfWayLeavesTheSourceByteIdenticalAndNoDestination() throws {
        let source = path("Users-v1.sqlite")
        let destination = path("Users-v2.sqlite")
        try InternationalUsers.generateSource(at: source)
        let before = try snapshot(directory)
        XCTAssertFalse(before.isEmpty)
        let manager = try MigrationManager(
            sourceModel: try InternationalUsers.sourceModel(),
            destinationModel: try InternationalUsers.destinationModel(),
            mappingModels: [try InternationalUsers.policyMapping()])
        manager.registerPolicy(named: SwedenUserMapping.name) { FailingSwedenUserMapping() }
        manager.registerPolicy(named: FinlandUserMapping.name) { FinlandUserMapping() }
        manager.batchSize = 100  // so that some batches were committed before the failure
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: destination)) { error in
            guard let error = error as? MigrationError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .entityMigrationPolicy)
            XCTAssertTrue(error.message.contains("on fire"), error.message)
        }
        XCTAssertFalse(FileIO.exists(destination))
        XCTAssertEqual(
            Array(try snapshot(directory).keys), ["Users-v1.sqlite"],
            "no destination, partial or companion file is left")
        XCTAssertEqual(try snapshot(directory), before, "the source is byte-identical")
    }

    // MARK: The runner's scenarios

    func testEveryScenarioRuns() throws {
        for scenario in ReferenceMigrations.scenarios {
            let dir = directory + "/scenario-\(scenario.number)"
            try TemporaryDirectory.create(dir)
            let result = try ReferenceMigrations.run(scenario: scenario.number, in: dir)
            XCTAssertFalse(result.reports.isEmpty)
            XCTAssertTrue(result.lines.count > 3)
            for destination in result.destinationPaths { XCTAssertTrue(FileIO.exists(destination), destination) }
        }
        XCTAssertThrowsError(try ReferenceMigrations.run(scenario: 6, in: directory)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidArgument)
        }
    }

    // MARK: Helpers

    /// Every file in a directory with its bytes.
    func snapshot(_ dir: String, except: Set<String> = []) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in TemporaryDirectory.list(dir) where !except.contains(name) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir + "/" + name, isDirectory: &isDirectory),
                isDirectory.boolValue
            {
                continue
            }
            files[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
        }
        return files
    }
}
