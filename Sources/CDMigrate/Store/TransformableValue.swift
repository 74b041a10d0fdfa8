/// What Core Data stores for a value given to a transformable attribute.
///
/// Core Data keeps a transformable attribute's value as the bytes its value transformer makes of
/// the object: with no transformer named, or one of Foundation's keyed-archive transformers
/// (`NSKeyedUnarchiveFromData`, `NSSecureUnarchiveFromData`,
/// `NSSecureUnarchiveFromDataTransformer`), an NSKeyedArchiver archive of the object. So a policy
/// or a value expression may give such an attribute a string, a number, a date, a URL, a UUID, a
/// decimal, or an array of those (`[] as NSArray`, `FUNCTION($entityPolicy, "screenshotURLs")`),
/// and the store gets its archive, as Core Data would write it. Bytes are taken as the
/// transformer's output, unchanged (what a copy of a transformable column carries). A transformer
/// of the app's own (`ImageTransformer`) is code cdmigrate cannot run: a value other than bytes
/// is refused with a message saying so.
enum TransformableValue {
    /// Foundation's transformers that archive with NSKeyedArchiver (Core Data's default is one).
    static let keyedArchivers: Set<String> = [
        "NSKeyedUnarchiveFromData", "NSSecureUnarchiveFromData",
        "NSSecureUnarchiveFromDataTransformer",
    ]

    /// Whether `attribute`'s transformer archives with NSKeyedArchiver: none named (Core Data's
    /// default; Xcode writes an emptied name as `valueTransformerName=""`) or one of Foundation's.
    static func archivesWithKeyedArchiver(_ attribute: AttributeDescription) -> Bool {
        guard let transformer = attribute.valueTransformerName, !transformer.isEmpty else { return true }
        return keyedArchivers.contains(transformer)
    }

    /// How deep arrays may nest in a value to archive (a host's value is not trusted to end).
    static let maximumNesting = 64

    /// `value` as `attribute` keeps it: for a transformable attribute whose transformer archives
    /// with NSKeyedArchiver, a value other than bytes (or nil) becomes its archive; anything
    /// else is returned as it is, for `AttributeValueCoercion` to check.
    ///
    /// - Throws: `MigrationError` `.invalidArgument` naming the attribute when its transformer is
    ///   the app's own, or the value holds something no archive holds (an instance, `$manager`).
    static func stored(_ value: Value, for attribute: AttributeDescription) throws -> Value {
        guard attribute.attributeType == .transformable else { return value }
        switch value {
        case .null, .binary: return value
        default: break
        }
        let owner = "\(attribute.entity?.name ?? "?").\(attribute.name)"
        if !archivesWithKeyedArchiver(attribute), let transformer = attribute.valueTransformerName {
            throw MigrationError(
                .invalidArgument,
                "attribute '\(owner)' is transformed by '\(transformer)', the app's own value transformer, which cdmigrate cannot run: give the attribute the bytes the transformer makes (a binary value), not the \(value.typeName) value '\(value)'"
            )
        }
        return .binary(try archive(value, what: "attribute '\(owner)'"))
    }

    /// Foundation's classes whose archives `read` turns back into values: what `archive` writes
    /// (and their mutable kinds). An archive holding any other class (a dictionary, a set, a
    /// class of the app's) is handed over as its bytes.
    static let readableClasses: Set<String> = [
        "NSString", "NSMutableString", "NSData", "NSMutableData", "NSDate",
        "NSUUID", "NSURL", "NSNull", "NSDecimalNumber", "NSArray", "NSMutableArray",
        "NSDictionary", "NSMutableDictionary",
    ]

    /// The object a transformable attribute's stored bytes stand for, as Core Data hands it to
    /// whoever reads the attribute (`valueForKey:` on a source instance, `$source.<key>` in a
    /// value expression, a policy method's argument): the transformer's `reverseTransformedValue`.
    /// For Core Data's default transformer and Foundation's keyed-archive ones, an archive of a
    /// string, number, date, URL, UUID, decimal number or an array of those is that value;
    /// anything else — an archive of another class, of data at its root (bytes already mean the
    /// transformer's output when written back), bytes that are no archive, or an attribute whose
    /// transformer is the app's own — is returned as it is stored. Never throws: what cannot be
    /// read stays bytes.
    static func read(_ value: Value, for attribute: AttributeDescription) -> Value {
        guard attribute.attributeType == .transformable, case .binary(let bytes) = value,
            archivesWithKeyedArchiver(attribute),
            bytes.starts(with: binaryPropertyListMagic),
            let archive = try? KeyedArchive(bytes: bytes, code: .invalidArgument, what: "a transformable value"),
            archive.classKeys().allSatisfy({ readableClasses.contains($0.className) }),
            let root = try? archive.decode(archive.topReference()),
            let decoded = self.value(of: root)
        else { return value }
        if case .binary = decoded { return value }
        return decoded
    }

    private static let binaryPropertyListMagic = Array("bplist00".utf8)

    private static func value(of archived: ArchiveValue) -> Value? {
        if let plain = archived.plainValue { return plain }
        switch archived {
        case .array(let items):
            var values: [Value] = []
            values.reserveCapacity(items.count)
            for item in items {
                guard let element = value(of: item) else { return nil }
                values.append(element)
            }
            return .collection(values)
        case .dictionary(let entries):
            var values: [(key: Value, value: Value)] = []
            values.reserveCapacity(entries.count)
            for entry in entries {
                guard let key = value(of: entry.key), let member = value(of: entry.value) else { return nil }
                values.append((key: key, value: member))
            }
            return .dictionary(values)
        default: return nil
        }
    }

    /// The NSKeyedArchiver archive of `value` (its root object), as Foundation writes it.
    static func archive(_ value: Value, what: String) throws -> [UInt8] {
        let writer = KeyedArchiveWriter(what: "the archive of \(what)")
        let root = try object(value, writer, what: what, depth: 0)
        return try writer.archive(root: root)
    }

    private static func object(_ value: Value, _ writer: KeyedArchiveWriter, what: String, depth: Int) throws
        -> PropertyListValue
    {
        switch value {
        case .collection(let items):
            guard depth < maximumNesting else {
                throw MigrationError(
                    .invalidArgument, "\(what): the value nests arrays more than \(maximumNesting) deep")
            }
            return try writer.array { try items.map { try object($0, writer, what: what, depth: depth + 1) } }
        case .dictionary(let entries):
            guard depth < maximumNesting else {
                throw MigrationError(
                    .invalidArgument, "\(what): the value nests collections more than \(maximumNesting) deep")
            }
            var keys = Set<Value>(minimumCapacity: entries.count)
            for entry in entries {
                switch entry.key {
                case .null, .object, .collection, .dictionary, .migrationManager:
                    throw MigrationError(
                        .invalidArgument,
                        "\(what): a dictionary's key must be a string, number, date, URL, UUID or data, not the \(entry.key.typeName) value '\(entry.key)'"
                    )
                default: break
                }
                // An NSDictionary holds each key once (isEqual:): a second entry would be lost.
                guard keys.insert(entry.key).inserted else {
                    throw MigrationError(
                        .invalidArgument, "\(what): the dictionary holds the key '\(entry.key)' more than once")
                }
            }
            // NSKeyedArchiver encodes every key, then every value (NSDictionary's encodeWithCoder:).
            return try writer.dictionary(
                keys: { try entries.map { try object($0.key, writer, what: what, depth: depth + 1) } },
                values: { try entries.map { try object($0.value, writer, what: what, depth: depth + 1) } })
        case .object, .migrationManager:
            throw MigrationError(
                .invalidArgument,
                "\(what) is transformable: it keeps archived values (strings, numbers, dates, URLs, UUIDs, data, arrays and dictionaries of them), not the \(value.typeName) value '\(value)'"
            )
        case .null where depth > 0:
            // An array holds no nil: NSNull stands for it, as Foundation's collections keep it.
            return writer.encode(nil, classes: ["NSNull"]) { [] }
        case .bool:
            return ArchivedValueWriter.object(value, type: .boolean, writer)
        default:
            return ArchivedValueWriter.object(value, type: .integer64, writer)
        }
    }
}
