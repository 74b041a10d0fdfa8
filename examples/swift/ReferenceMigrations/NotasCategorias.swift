import CDMigrate

/// Scenario 1: a Spanish notes app whose string `categoria` becomes a Categoria entity (v2 → v3).
public enum NotasCategorias {
    public static let directory = "1-notas-categorias"
    public static let categoriaNames = ["Trabajo", "Personal", "Compras", "Ideas", "Viajes", "Salud", "Recetas",
                                        "Estudios", "Finanzas", "Música", "Películas", "Libros", "Cumpleaños", "Año nuevo"]

    public static func sourceModel() throws -> ManagedObjectModel { try ReferenceMigrations.model(directory, "NotasV2.model.json") }
    public static func destinationModel() throws -> ManagedObjectModel { try ReferenceMigrations.model(directory, "NotasV3.model.json") }
    public static func mapping() throws -> MappingModel { try ReferenceMigrations.mapping(directory, "NotasV2ToV3.mapping.json") }

    /// A manager ready to run the migration (the policy registered).
    public static func manager() throws -> MigrationManager {
        let manager = try MigrationManager(sourceModel: try sourceModel(), destinationModel: try destinationModel(), mappingModels: [try mapping()])
        manager.registerPolicy(named: CrearCategoriasMigrationPolicy.name) { CrearCategoriasMigrationPolicy() }
        return manager
    }

    /// A v2 store of `count` notes: most with one of the categories (some categories far more
    /// common than others), some with none (nil) and a few with an empty string.
    public static func generateSource(at path: String, count: Int = 800, seed: UInt64 = 1) throws {
        var random = SeededGenerator(seed: seed)
        let subjects = ["Llamar a", "Comprar", "Revisar", "Enviar", "Preparar", "Leer", "Escribir a", "Reservar", "Pagar", "Pensar en"]
        let objects = ["mamá", "el informe trimestral", "pan y leche", "la presentación", "el vuelo a Lima", "«Cien años de soledad»",
                       "el dentista", "la factura de la luz", "una idea para la app", "el regalo de Lucía", "la cena del sábado", "los apuntes de cálculo"]
        let tags = ["urgente", "casa", "oficina", "familia", "pendiente", "fin de semana", "#importante"]
        let model = try sourceModel()
        try StoreAccess.createStore(at: path, model: model) { store in
            for i in 0..<count {
                let nota = try store.insertObject(entityName: "Nota")
                try nota.setValue(.string("Nota \(i + 1): \(random.pick(subjects)) \(random.pick(objects))"), forKey: "contenido")
                // Between 2015 and 2020, to the second.
                try nota.setValue(.date(Double(random.int(441_763_200...631_152_000))), forKey: "fecha")
                if random.chance(0.6) {
                    let n = random.int(1...3)
                    try nota.setValue(.string((0..<n).map { _ in random.pick(tags) }.joined(separator: ", ")), forKey: "etiquetas")
                }
                let roll = random.unit()
                if roll < 0.2 {
                    // no category
                } else if roll < 0.23 {
                    try nota.setValue(.string(""), forKey: "categoria")
                } else {
                    // Skewed: the first categories are the common ones.
                    let index = Int(random.unit() * random.unit() * Double(categoriaNames.count))
                    try nota.setValue(.string(categoriaNames[min(index, categoriaNames.count - 1)]), forKey: "categoria")
                }
            }
        }
    }

    public static func run(in directory: String) throws -> ScenarioResult {
        var result = ScenarioResult(number: 1, title: "Notas: a string category becomes a Categoria entity")
        let source = directory + "/Notas-v2.sqlite", destination = directory + "/Notas-v3.sqlite"
        try generateSource(at: source)
        let report = try manager().migrateStore(from: source, to: destination)
        result.sourcePaths = [source]
        result.destinationPaths = [destination]
        result.reports = [("NotasV2ToV3", report)]
        result.samples = try StoreAccess.readStore(at: destination, model: try destinationModel()) { store in
            var lines: [String] = []
            let categorias = try StoreAccess.all("Categoria", in: store)
            var counts: [(String, Int)] = []
            for categoria in categorias { counts.append((try categoria.string("nombre") ?? "?", try categoria.objects("notas").count)) }
            lines.append("Categoria: " + counts.sorted { $0.1 > $1.1 }.map { "\($0.0) (\($0.1))" }.joined(separator: ", "))
            for nota in try StoreAccess.all("Nota", in: store).prefix(4) {
                let names = try nota.objects("categorias").compactMap { try $0.string("nombre") }
                lines.append("Nota \"\(try nota.string("contenido") ?? "")\" etiquetas=\(try nota.value(forKey: "etiquetas")) categorias=\(names)")
            }
            return lines
        }
        return result
    }
}
