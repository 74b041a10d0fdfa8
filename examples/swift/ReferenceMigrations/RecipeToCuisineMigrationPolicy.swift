import CDMigrate

/// Scenario 2's policy for RecipeToCuisine (source Recipe, destination Cuisine): one Cuisine per
/// distinct cuisine string. The first recipe of a cuisine makes it with the mapping's own value
/// expression (`name = $source.cuisine`); later recipes of the same cuisine are only associated
/// with it. A Cuisine therefore has several sources, so (as in Core Data, where the default
/// `createRelationships` refuses such a destination with 134110) the policy sets its `recipes`
/// itself: the RecipeToRecipe destinations of all its source recipes. Each Recipe's `cuisines`
/// finds its one Cuisine. A recipe without a cuisine (nil or empty) makes none.
///
/// Cuisine names are Unicode NFC, compared and stored, as in C and Python (whose policies find
/// the Cuisine with a destination fetch): "Péruvian" precomposed and with a combining accent are
/// one Cuisine named in NFC.
public final class RecipeToCuisineMigrationPolicy: EntityMigrationPolicy {
    public static let name = "RecipeToCuisineMigrationPolicy"
    private var cuisines: [String: ManagedObject] = [:]

    public override init() { super.init() }

    public override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
        guard let text = try sInstance.string("cuisine"), !text.isEmpty else { return }
        let name = CrearCategoriasMigrationPolicy.nfc(text)
        if let cuisine = cuisines[name] {
            try manager.associate(sourceInstance: sInstance, withDestinationInstance: cuisine, for: mapping)
        } else if let cuisine = try defaultCreateDestinationInstances(forSource: sInstance, in: mapping, manager: manager) {
            try cuisine.setValue(.string(name), forKey: "name")
            cuisines[name] = cuisine
        }
    }

    public override func createRelationships(forDestination cuisine: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
        let recipes = try manager.sourceInstances(forEntityMappingName: mapping.name, destinationInstances: [cuisine])
        let migrated = try manager.destinationInstances(forEntityMappingName: "RecipeToRecipe", sourceInstances: recipes)
        try cuisine.setValue(.collection(migrated.map { .object($0) }), forKey: "recipes")
    }

    public override func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
        cuisines = [:]
    }
}
