import CDMigrate

/// Scenario 5's policies, after the blog: each entity mapping takes every InternationalUser, and
/// its policy makes its entity only for users of its country, copying the name and the city with
/// one city renamed (a literal replacement, as `replacingOccurrences(of:with:)` does). Users it
/// does not make an instance for are not associated, so the migration report counts the users
/// that no mapping took.
open class CountryUserMapping: EntityMigrationPolicy {
    public let country: String
    public let entityName: String
    public let cityToReplace: String
    public let replacement: String

    public init(country: String, entityName: String, replacing cityToReplace: String, with replacement: String) {
        self.country = country
        self.entityName = entityName
        self.cityToReplace = cityToReplace
        self.replacement = replacement
        super.init()
    }

    open override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
        guard try sInstance.string("country") == country else { return }
        let user = try manager.createDestinationInstance(entityName: entityName)
        try user.setValue(try sInstance.value(forKey: "name"), forKey: "name")
        // A nil city stays nil (as the no-code mapping's FUNCTION on nil gives nil): v2's city is
        // not optional, so such a user fails validation (1570) in every language.
        if let city = try sInstance.string("city") {
            try user.setValue(.string(city.replacingAll(cityToReplace, with: replacement)), forKey: "city")
        }
        try manager.associate(sourceInstance: sInstance, withDestinationInstance: user, for: mapping)
    }
}

/// Sweden: SwedenUser, Trosa becomes Nora.
public final class SwedenUserMapping: CountryUserMapping {
    public static let name = "SwedenUserMapping"
    public init() { super.init(country: "Sweden", entityName: "SwedenUser", replacing: "Trosa", with: "Nora") }
}

/// Finland: FinlandUser, Turku becomes Åbo (its Swedish name).
public final class FinlandUserMapping: CountryUserMapping {
    public static let name = "FinlandUserMapping"
    public init() { super.init(country: "Finland", entityName: "FinlandUser", replacing: "Turku", with: "Åbo") }
}
