/// Every error cdmigrate reports: a code, a message naming what is at fault, and where
/// possible the position in the JSON document (`path`) or in an expression (`offset`).
///
/// Codes mirror Core Data's NSCocoaErrorDomain codes where Core Data has one, so that
/// Core Data users recognise them; codes below 1000 are cdmigrate's own.
public struct MigrationError: Error, Equatable, CustomStringConvertible {
    /// An error code: Core Data's `NSCocoaErrorDomain` codes where one exists, small numbers for
    /// cdmigrate's own input errors. The same numbers as the C API's `CDM_ERR_*` and Python's `MigrationError.code`.
    public struct Code: RawRepresentable, Hashable, CustomStringConvertible {
        /// The number.
        public var rawValue: Int32
        /// The code with number `rawValue`.
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
        /// 1560, Core Data's NSValidationMultipleErrorsError: several validation errors, in `underlying`.
        public static let validationMultipleErrors = Code(rawValue: 1560)
        /// 1570, Core Data's NSValidationMissingMandatoryPropertyError.
        public static let validationMissingMandatoryProperty = Code(rawValue: 1570)
        /// 1580, Core Data's NSValidationRelationshipLacksMinimumCountError.
        public static let validationRelationshipLacksMinimumCount = Code(rawValue: 1580)
        /// 1590, Core Data's NSValidationRelationshipExceedsMaximumCountError.
        public static let validationRelationshipExceedsMaximumCount = Code(rawValue: 1590)
        /// 1610, Core Data's NSValidationNumberTooLargeError.
        public static let validationNumberTooLarge = Code(rawValue: 1610)
        /// 1620, Core Data's NSValidationNumberTooSmallError.
        public static let validationNumberTooSmall = Code(rawValue: 1620)

        // Core Data's persistent store and migration codes.
        /// The store's metadata does not match the model (NSPersistentStoreIncompatibleVersionHashError).
        public static let incompatibleVersionHash = Code(rawValue: 134100)
        /// 134110, Core Data's NSMigrationError: a migration failed (a mapping that does not fit, a policy's error).
        public static let migration = Code(rawValue: 134110)
        /// 134120, Core Data's NSMigrationCancelledError: cancelled by `cancel()` or a progress handler.
        public static let migrationCancelled = Code(rawValue: 134120)
        /// 134130, Core Data's NSMigrationMissingSourceModelError: the store is not at the source model's version.
        public static let migrationMissingSourceModel = Code(rawValue: 134130)
        /// 134140, Core Data's NSMigrationMissingMappingModelError: no mapping model for a step.
        public static let migrationMissingMappingModel = Code(rawValue: 134140)
        /// 134150, Core Data's NSMigrationManagerSourceStoreError: the source store cannot be read.
        public static let migrationManagerSourceStore = Code(rawValue: 134150)
        /// 134160, Core Data's NSMigrationManagerDestinationStoreError: the destination cannot be written.
        public static let migrationManagerDestinationStore = Code(rawValue: 134160)
        /// 134170, Core Data's NSEntityMigrationPolicyError: a policy is missing or failed.
        public static let entityMigrationPolicy = Code(rawValue: 134170)
        /// 134180, Core Data's NSSQLiteError: SQLite failed (`sqliteResultCode` says how).
        public static let sqlite = Code(rawValue: 134180)
        /// 134190, Core Data's NSInferredMappingModelError: no mapping can be inferred.
        public static let inferredMappingModel = Code(rawValue: 134190)

        /// The code's name in words ("invalid mapping model", "missing source model"), as messages
        /// print it; docs/coming-from-core-data.md ("Error codes") gives Core Data's constant for each code.
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

        /// "134130 (NSMigrationMissingSourceModelError)".
        public var description: String { "\(rawValue) (\(name))" }
    }

    /// What went wrong, as a number (Core Data: `NSError.code`).
    public var code: Code
    /// What is at fault, named (Core Data: `localizedDescription`).
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
            guard let value = newValue else {
                position?.byte = -1
                return
            }
            position = TextPosition(character: position?.character ?? 0, byte: Int32(clamping: value))
        }
    }
    /// Both offsets in the space of one `Int?`: errors travel up deep parser recursions, so
    /// MigrationError keeps one optional field for both and stays small.
    private var position: TextPosition?
    /// The individual problems, for `validationMultipleErrors` and for model/mapping validation.
    public var underlying: [MigrationError]
    /// SQLite's (extended) result code, for errors SQLite reported (`SQLITE_BUSY` is 5,
    /// `SQLITE_CORRUPT` 11, …); nil otherwise.
    public var sqliteResultCode: Int32?
    /// For an individual validation error (1570–1620): the instance and property at fault.
    public var validationSubject: ValidationSubject?

    /// An error, for policies and host functions to throw.
    ///
    /// - parameter code: What went wrong.
    /// - parameter message: What is at fault, named.
    /// - parameter path: The file or JSON path at fault, when there is one.
    /// - parameter offset: The position in the file or text (in characters), when known.
    /// - parameter byteOffset: The same position in UTF-8 bytes, when known (what the C API reports).
    /// - parameter underlying: The errors this one collects.
    public init(
        _ code: Code, _ message: String, path: String? = nil, offset: Int? = nil, byteOffset: Int? = nil,
        underlying: [MigrationError] = []
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.position = offset.map {
            TextPosition(character: Int32(clamping: $0), byte: byteOffset.map { Int32(clamping: $0) } ?? -1)
        }
        self.underlying = underlying
    }

    /// The code, the message, and the path and offset when known.
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
        return MigrationError(
            code, "\(summary): \(errors.count) problem\(errors.count == 1 ? "" : "s")", underlying: errors)
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
