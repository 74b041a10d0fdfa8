/// What one validation error is about: the instance and the property that failed (Core Data's
/// `NSValidationObjectErrorKey` and `NSValidationKeyErrorKey` of an individual error).
public struct ValidationSubject: Equatable {
    /// The entity of the instance.
    public var entityName: String
    /// The instance's object ID URI (`x-coredata://<store UUID>/<Entity>/p<Z_PK>`).
    public var objectURI: String
    /// The primary key (Z_PK) of the instance.
    public var primaryKey: Int64
    /// The attribute or relationship that failed.
    public var key: String

    /// The instance `objectURI` (row `primaryKey` of `entityName`) and its property `key`.
    public init(entityName: String, objectURI: String, primaryKey: Int64, key: String) {
        self.entityName = entityName
        self.objectURI = objectURI
        self.primaryKey = primaryKey
        self.key = key
    }
}
