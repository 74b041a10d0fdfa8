/// Every error cdmigrate reports: a code, a message naming what is at fault, and where
/// possible the position in the JSON document (`path`) or in an expression (`offset`).
///
/// Codes mirror Core Data's NSCocoaErrorDomain codes where Core Data has one, so that
/// Core Data users recognise them; codes below 1000 are cdmigrate's own.
public struct MigrationError: Error, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, CustomStringConvertible {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        // cdmigrate's own codes.
        /// Text that is not well-formed JSON.
        public static let invalidJSON = Code(rawValue: 1)
        /// A data model that fails validation.
        public static let invalidModel = Code(rawValue: 2)
        /// A mapping model that fails validation against its models.
        public static let invalidMapping = Code(rawValue: 3)
        /// A value expression or predicate that does not parse.
        public static let expressionSyntax = Code(rawValue: 4)
        /// A value expression or predicate that fails when evaluated.
        public static let expressionEvaluation = Code(rawValue: 5)
        /// A wrong argument from the host (unknown name, wrong type, misuse).
        public static let invalidArgument = Code(rawValue: 6)
        /// A file that cannot be read or written.
        public static let io = Code(rawValue: 7)

        // Core Data's validation codes.
        public static let validationMultipleErrors = Code(rawValue: 1560)
        public static let validationMissingMandatoryProperty = Code(rawValue: 1570)
        public static let validationRelationshipLacksMinimumCount = Code(rawValue: 1580)
        public static let validationRelationshipExceedsMaximumCount = Code(rawValue: 1590)
        public static let validationNumberTooLarge = Code(rawValue: 1610)
        public static let validationNumberTooSmall = Code(rawValue: 1620)

        // Core Data's persistent store and migration codes.
        /// The store's metadata does not match the model (NSPersistentStoreIncompatibleVersionHashError).
        public static let incompatibleVersionHash = Code(rawValue: 134100)
        public static let migration = Code(rawValue: 134110)
        public static let migrationCancelled = Code(rawValue: 134120)
        public static let migrationMissingSourceModel = Code(rawValue: 134130)
        public static let migrationMissingMappingModel = Code(rawValue: 134140)
        public static let migrationManagerSourceStore = Code(rawValue: 134150)
        public static let migrationManagerDestinationStore = Code(rawValue: 134160)
        public static let entityMigrationPolicy = Code(rawValue: 134170)
        public static let sqlite = Code(rawValue: 134180)
        public static let inferredMappingModel = Code(rawValue: 134190)

        public var name: String {
            switch self {
            case .invalidJSON: return "invalid JSON"
            case .invalidModel: return "invalid model"
            case .invalidMapping: return "invalid mapping model"
            case .expressionSyntax: return "expression syntax error"
            case .expressionEvaluation: return "expression evaluation error"
            case .invalidArgument: return "invalid argument"
            case .io: return "I/O error"
            case .validationMultipleErrors: return "multiple validation errors"
            case .validationMissingMandatoryProperty: return "missing mandatory property"
            case .validationRelationshipLacksMinimumCount: return "relationship lacks minimum count"
            case .validationRelationshipExceedsMaximumCount: return "relationship exceeds maximum count"
            case .validationNumberTooLarge: return "number too large"
            case .validationNumberTooSmall: return "number too small"
            case .incompatibleVersionHash: return "incompatible version hash"
            case .migration: return "migration error"
            case .migrationCancelled: return "migration cancelled"
            case .migrationMissingSourceModel: return "missing source model"
            case .migrationMissingMappingModel: return "missing mapping model"
            case .migrationManagerSourceStore: return "source store error"
            case .migrationManagerDestinationStore: return "destination store error"
            case .entityMigrationPolicy: return "entity migration policy error"
            case .sqlite: return "SQLite error"
            case .inferredMappingModel: return "inferred mapping model error"
            default: return "error"
            }
        }

        public var description: String { "\(rawValue) (\(name))" }
    }

    public var code: Code
    public var message: String
    /// Where in a JSON document the problem is, as a path like `$.entities[2].attributes[0].type`.
    public var path: String?
    /// Zero-based character offset in the expression or predicate text at fault.
    public var offset: Int? {
        get { position.map { Int($0.character) } }
        set { position = newValue.map { TextPosition(character: Int32(clamping: $0), byte: position?.byte ?? -1) } }
    }
    /// The same position as a zero-based UTF-8 byte offset (what the C API's `cdm_error_offset`
    /// reports, as `sqlite3_error_offset` does); set wherever `offset` is.
    public var byteOffset: Int? {
        get { position.flatMap { $0.byte >= 0 ? Int($0.byte) : nil } }
        set {
            guard let value = newValue else { position?.byte = -1; return }
            position = TextPosition(character: position?.character ?? 0, byte: Int32(clamping: value))
        }
    }
    /// Both offsets in the space of one `Int?`: errors travel up deep parser recursions, so
    /// MigrationError stays as small as it was before byte offsets.
    private var position: TextPosition?
    /// The individual problems, for `validationMultipleErrors` and for model/mapping validation.
    public var underlying: [MigrationError]
    /// SQLite's (extended) result code, for errors SQLite reported (`SQLITE_BUSY` is 5,
    /// `SQLITE_CORRUPT` 11, …); nil otherwise.
    public var sqliteResultCode: Int32?
    /// For an individual validation error (1570–1620): the instance and property at fault.
    public var validationSubject: ValidationSubject?

    public init(_ code: Code, _ message: String, path: String? = nil, offset: Int? = nil, byteOffset: Int? = nil,
                underlying: [MigrationError] = []) {
        self.code = code
        self.message = message
        self.path = path
        self.position = offset.map { TextPosition(character: Int32(clamping: $0), byte: byteOffset.map { Int32(clamping: $0) } ?? -1) }
        self.underlying = underlying
    }

    public var description: String {
        var text = "error \(code.rawValue): \(message)"
        if let path = path { text += " (at \(path))" }
        if let offset = offset { text += " (at character \(offset))" }
        for error in underlying { text += "\n  - " + error.description.replacingAll("\n", with: "\n    ") }
        return text
    }

    /// The UTF-8 byte offset of the character at `characterOffset` in `text` (the text's UTF-8
    /// length when the offset is at or past its end).
    public static func utf8Offset(ofCharacter characterOffset: Int, in text: String) -> Int {
        text.prefix(max(characterOffset, 0)).utf8.count
    }

    /// Several problems as one error: the single one itself, or `code` with all of them underlying.
    public static func collecting(_ errors: [MigrationError], code: Code, summary: String) -> MigrationError? {
        if errors.isEmpty { return nil }
        if errors.count == 1 { return errors[0] }
        return MigrationError(code, "\(summary): \(errors.count) problem\(errors.count == 1 ? "" : "s")", underlying: errors)
    }
}

extension String {
    /// Foundation-free replacement of every occurrence of `target`.
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, contains(target) else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

/// Where in an expression or predicate text an error is: a character and a UTF-8 byte offset
/// (-1: not known).
struct TextPosition: Equatable {
    var character: Int32
    var byte: Int32
}
