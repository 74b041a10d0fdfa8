import CDMigrate

/// Scenario 2: Apple's MigrationV2 sample (chefs' names split by host functions, cuisines as entities).
public enum Recipes {
    public static let directory = "2-recipes"
    public static let cuisineNames = ["Japanese", "French", "Italian", "Mexican", "Thai", "Indian", "Spanish", "和食", "Peruvian"]
    /// One-word, two-word, multi-word, empty and Japanese (ideographic space) names, and one chef with no name.
    public static let chefNames: [String?] = [
        "Jiro Ono", "Nobu Matsuhisa", "Julia Child", "Alain Ducasse", "Juan Mari Arzak", "Elena Arzak Espina",
        "Ferran Adrià", "Massimo Bottura", "Gastón Acurio", "Madonna", "Nigella", "", "山田　太郎", "小野 二郎",
        "Marie-Antoine Carême", "Auguste Escoffier", "  Gordon   Ramsay ", "Yotam Ottolenghi", "Dominique Crenn", nil,
    ]

    public static func sourceModel() throws -> ManagedObjectModel { try ReferenceMigrations.model(directory, "RecipesV1.model.json") }
    public static func destinationModel() throws -> ManagedObjectModel { try ReferenceMigrations.model(directory, "RecipesV2.model.json") }
    public static func mapping() throws -> MappingModel { try ReferenceMigrations.mapping(directory, "RecipesV1ToV2.mapping.json") }

    public static func manager() throws -> MigrationManager {
        let manager = try MigrationManager(sourceModel: try sourceModel(), destinationModel: try destinationModel(), mappingModels: [try mapping()])
        MigrationFunctions.register(with: manager)
        manager.registerPolicy(named: RecipeToCuisineMigrationPolicy.name) { RecipeToCuisineMigrationPolicy() }
        return manager
    }

    /// Chefs (every name of `chefNames`), `ingredients` ingredients and `recipes` recipes, each
    /// recipe with 1–6 ingredients, most with a chef and a cuisine.
    public static func generateSource(at path: String, ingredients ingredientCount: Int = 90, recipes recipeCount: Int = 300, seed: UInt64 = 2) throws {
        var random = SeededGenerator(seed: seed)
        let trainings = ["Le Cordon Bleu", "Tsuji Culinary Institute", "self-taught", "apprenticeship", "Basque Culinary Center", nil]
        let foods = ["醤油", "味噌", "rice", "nori", "salmon", "tofu", "butter", "shallot", "garlic", "tomato", "basil", "chili",
                     "lime", "coriander", "saffron", "olive oil", "egg", "flour", "dashi", "mirin", "ginger", "leek", "potato", "corn"]
        let units = ["1 tbsp", "2 tsp", "200 g", "1 cup", "3", "a pinch", "大さじ2", "50 ml", "1 kg", "½ cup"]
        let dishes = ["soup", "stew", "salad", "risotto", "tart", "curry", "丼", "ceviche", "tacos", "paella", "gratin", "ramen"]
        let model = try sourceModel()
        try StoreAccess.createStore(at: path, model: model) { store in
            var chefs: [ManagedObject] = []
            for name in chefNames {
                let chef = try store.insertObject(entityName: "Chef")
                if let name = name { try chef.setValue(.string(name), forKey: "name") }
                if let training = random.pick(trainings) { try chef.setValue(.string(training), forKey: "training") }
                chefs.append(chef)
            }
            var ingredients: [ManagedObject] = []
            for i in 0..<ingredientCount {
                let ingredient = try store.insertObject(entityName: "Ingredient")
                try ingredient.setValue(.string("\(foods[i % foods.count])\(i < foods.count ? "" : " #\(i / foods.count + 1)")"), forKey: "name")
                try ingredient.setValue(.string(random.pick(units)), forKey: "amount")
                ingredients.append(ingredient)
            }
            for i in 0..<recipeCount {
                let recipe = try store.insertObject(entityName: "Recipe")
                try recipe.setValue(.string("Recipe \(i + 1): \(random.pick(foods)) \(random.pick(dishes))"), forKey: "name")
                try recipe.setValue(.string("Step 1: prepare. Step \(random.int(2...9)): serve."), forKey: "directions")
                let roll = random.unit()
                if roll < 0.9 {
                    try recipe.setValue(.string(random.pick(cuisineNames)), forKey: "cuisine")
                } else if roll < 0.95 {
                    try recipe.setValue(.string(""), forKey: "cuisine")
                }
                if random.chance(0.92) { try recipe.setValue(.object(random.pick(chefs)), forKey: "chef") }
                var chosen: [ManagedObject] = []
                for _ in 0..<random.int(1...6) {
                    let ingredient = random.pick(ingredients)
                    if !chosen.contains(where: { $0 === ingredient }) { chosen.append(ingredient) }
                }
                try recipe.add(chosen, toKey: "ingredients")
            }
        }
    }

    public static func run(in directory: String) throws -> ScenarioResult {
        var result = ScenarioResult(number: 2, title: "Recipes: Apple's MigrationV2 sample")
        let source = directory + "/Recipes-v1.sqlite", destination = directory + "/Recipes-v2.sqlite"
        try generateSource(at: source)
        let report = try manager().migrateStore(from: source, to: destination)
        result.sourcePaths = [source]
        result.destinationPaths = [destination]
        result.reports = [("RecipesV1ToV2", report)]
        result.samples = try StoreAccess.readStore(at: destination, model: try destinationModel()) { store in
            var lines: [String] = []
            for chef in try StoreAccess.all("Chef", in: store).prefix(14) {
                lines.append("Chef firstName=\(try chef.value(forKey: "firstName")) lastName=\(try chef.value(forKey: "lastName")) recipes=\(try chef.objects("recipes").count)")
            }
            var cuisines: [String] = []
            for cuisine in try StoreAccess.all("Cuisine", in: store) {
                cuisines.append("\(try cuisine.string("name") ?? "?") (\(try cuisine.objects("recipes").count))")
            }
            lines.append("Cuisine: " + cuisines.joined(separator: ", "))
            for recipe in try StoreAccess.all("Recipe", in: store).prefix(3) {
                let cuisine = try recipe.objects("cuisines").compactMap { try $0.string("name") }
                let chef = try recipe.value(forKey: "chef").object
                lines.append("Recipe \"\(try recipe.string("name") ?? "")\" cuisines=\(cuisine) chef=\(try chef?.string("firstName") ?? "-") ingredients=\(try recipe.objects("ingredients").count) rating=\(try recipe.value(forKey: "rating"))")
            }
            return lines
        }
        return result
    }
}
