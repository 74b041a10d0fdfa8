/// A stored fetch request of a model (Xcode's `<fetchRequest>`; Core Data's
/// `NSManagedObjectModel.fetchRequestTemplate(forName:)`), kept as written: cdmigrate does not run
/// them, but a model read from Xcode keeps them so nothing of the file is lost.
public struct FetchRequestTemplate: Equatable {
    /// The template's name.
    public var name: String
    /// The entity the request fetches.
    public var entityName: String
    /// The predicate's text as the model file writes it (`predicateString`), if any.
    public var predicateFormat: String?

    /// A template named `name` fetching `entityName` with `predicateFormat`.
    public init(name: String, entityName: String, predicateFormat: String? = nil) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
    }
}
