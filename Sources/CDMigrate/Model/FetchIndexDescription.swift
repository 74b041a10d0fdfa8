/// NSFetchIndexDescription: a named index over some of an entity's properties, which Core Data
/// creates in SQLite stores (`CREATE INDEX Z_<Entity>_<name> ON <TABLE> (<column> COLLATE BINARY ASC, …)`).
/// Fetch indexes take no part in version hashes.
public struct FetchIndexDescription: Equatable {
    /// NSFetchIndexElementType: a B-tree index or an R-tree (bounding-box) index.
    public enum ElementType: String, Equatable {
        /// `.binary`: an ordinary SQLite index.
        case binary = "Binary"
        /// `.rTree`: an R-tree virtual table (cdmigrate does not create these).
        case rTree = "RTree"
    }

    /// NSFetchIndexElementDescription: one property (or expression) of the index and its order.
    public struct Element: Equatable {
        /// The property indexed, nil for an expression element.
        public var propertyName: String?
        /// The expression indexed, as written in the model, when the element is not a property.
        public var expression: String?
        /// Binary (B-tree) or R-tree.
        public var type: ElementType
        /// Whether the element sorts ascending (Core Data: `isAscending`).
        public var isAscending: Bool

        /// An element over a property or an expression.
        /// - Parameters:
        ///   - propertyName: the property indexed (nil for an expression).
        ///   - expression: the expression indexed, as written in the model.
        ///   - type: binary or R-tree.
        ///   - isAscending: the sort order.
        /// - Core Data: `NSFetchIndexElementDescription(property:collationType:)`.
        public init(
            propertyName: String?, expression: String? = nil, type: ElementType = .binary, isAscending: Bool = true
        ) {
            self.propertyName = propertyName
            self.expression = expression
            self.type = type
            self.isAscending = isAscending
        }
    }

    /// The index's name (Core Data: `name`).
    public var name: String
    /// Its elements, in order (Core Data: `elements`).
    public var elements: [Element]
    /// An optional predicate restricting the index (a partial index), as written; not created.
    public var partialIndexPredicate: String?

    /// A fetch index made in code.
    /// - Parameters:
    ///   - name: the index's name.
    ///   - elements: its elements, in order.
    ///   - partialIndexPredicate: a predicate restricting the index, as written (kept, not created).
    /// - Core Data: `NSFetchIndexDescription(name:elements:)`.
    public init(name: String, elements: [Element], partialIndexPredicate: String? = nil) {
        self.name = name
        self.elements = elements
        self.partialIndexPredicate = partialIndexPredicate
    }
}
