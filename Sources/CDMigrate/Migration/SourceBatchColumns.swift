import CSQLite

/// Attribute columns of a `SourceBatch` in flat arrays — numbers as 64-bit integers or doubles,
/// texts and bytes one after another in one buffer — read for several attributes in one query, so
/// that a host reads a batch's values without a `Value` (or a JSON text) per value. The values are
/// those `SourceBatch.values(ofAttribute:)` gives, laid out by the attribute's type.
public struct SourceBatchColumn {
    /// How a column's values are laid out, by the attribute's type.
    public enum Kind: Int32 {
        /// `integers`: integer attributes, and booleans as 0 or 1.
        case integer = 1
        /// `doubles`: double and float attributes, and dates as seconds since 1 January 2001.
        case double = 2
        /// `offsets` into `bytes`, UTF-8: strings, URIs, decimals, UUIDs (as their text).
        case text = 3
        /// `offsets` into `bytes`: binary data, and a transformable attribute's stored bytes.
        case bytes = 4

        /// The kind of an attribute type's values; nil for a type without stored values of its own
        /// (undefined, object ID, composite).
        public init?(_ type: AttributeType) {
            switch type {
            case .integer16, .integer32, .integer64, .boolean: self = .integer
            case .double, .float, .date: self = .double
            case .string, .uri, .decimal, .uuid: self = .text
            case .binary, .transformable: self = .bytes
            case .undefined, .objectID, .composite: return nil
            }
        }
    }

    public let kind: Kind
    /// One per row (`.integer`): 0 for a null.
    public var integers: [Int64] = []
    /// One per row (`.double`): 0 for a null.
    public var doubles: [Double] = []
    /// Rows + 1 offsets into `bytes` (`.text`, `.bytes`): row r's value is
    /// `bytes[offsets[r] ..< offsets[r + 1] - 1]`, followed by a NUL byte (an empty value for a null).
    public var offsets: [Int64] = [0]
    /// Every text or byte value, each followed by a NUL byte.
    public var bytes: [UInt8] = []
    /// The rows whose value is null, ascending: a null value, a row whose entity lacks the
    /// attribute, a number that is not finite.
    public var nulls: [Int64] = []

    init(kind: Kind, capacity: Int) {
        self.kind = kind
        switch kind {
        case .integer: integers.reserveCapacity(capacity)
        case .double: doubles.reserveCapacity(capacity)
        case .text, .bytes:
            offsets.reserveCapacity(capacity + 1)
            bytes.reserveCapacity(capacity * 16)
        }
    }

    /// The number of rows appended so far.
    var count: Int {
        switch kind {
        case .integer: return integers.count
        case .double: return doubles.count
        case .text, .bytes: return offsets.count - 1
        }
    }

    mutating func appendNull() {
        nulls.append(Int64(count))
        switch kind {
        case .integer: integers.append(0)
        case .double: doubles.append(0)
        case .text, .bytes: appendBytes(UnsafeBufferPointer(start: nil, count: 0))
        }
    }

    mutating func appendBytes(_ value: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: value)
        bytes.append(0)
        offsets.append(Int64(bytes.count))
    }

    mutating func appendDouble(_ value: Double) {
        if value.isFinite { doubles.append(value) } else { appendNull() }
    }

    /// A value as `SourceBatch.values(ofAttribute:)` gives it.
    mutating func append(_ value: Value, _ attribute: AttributeDescription) throws {
        switch (kind, value) {
        case (_, .null): appendNull()
        case (.integer, .integer(let i)): integers.append(i)
        case (.integer, .bool(let b)): integers.append(b ? 1 : 0)
        case (.double, .double(let d)), (.double, .date(let d)): appendDouble(d)
        case (.text, .string(let s)), (.text, .uri(let s)), (.text, .decimal(let s)): appendText(s)
        case (.text, .uuid(let b)): appendText(Value.uuidString(b))
        case (.bytes, .binary(let b)): b.withUnsafeBufferPointer { appendBytes($0) }
        default:
            throw MigrationError(
                .migration,
                "attribute '\(attribute.entity?.name ?? "").\(attribute.name)' has a value of another kind than its type's (\(attribute.attributeType.rawValue))"
            )
        }
    }

    mutating func appendText(_ text: String) {
        var text = text
        text.withUTF8 { appendBytes($0) }
    }
}

extension SourceBatch {
    /// The values of several attributes of the source entity (or of its sub-entities) for every
    /// row, read in one query, each as a `SourceBatchColumn` of its type's kind: the values
    /// `values(ofAttribute:)` gives, without a `Value` per stored number or text.
    ///
    /// - parameter attributeNames: Attributes of the source entity or of a sub-entity.
    /// - returns: One column per name, in order, each of one value per source key.
    /// - throws: `MigrationError` `.invalidArgument` naming an attribute no source entity has, or
    ///   an attribute whose type has no stored values of its own (undefined,
    ///   object ID, composite), or `.sqlite` when the store cannot be read.
    public func columns(ofAttributes attributeNames: [String]) throws -> [SourceBatchColumn] {
        try checkLive("columns(ofAttributes:)")
        var attributes: [AttributeDescription] = []
        var columns: [SourceBatchColumn] = []
        for name in attributeNames {
            guard let entity = mapping.sourceEntity,
                let attribute = entity.selfAndDescendants.lazy.compactMap({ $0.attributesByName[name] }).first
            else {
                throw MigrationError(
                    .invalidArgument,
                    "entity mapping '\(mapping.name)': source entity '\(mapping.sourceEntityName ?? "")' has no attribute '\(name)'"
                )
            }
            guard let kind = SourceBatchColumn.Kind(attribute.attributeType) else {
                throw MigrationError(
                    .invalidArgument,
                    "attribute '\(attribute.entity?.name ?? "").\(name)' is of type \(attribute.attributeType.rawValue): it has no stored values of its own to read as a column"
                )
            }
            attributes.append(attribute)
            columns.append(SourceBatchColumn(kind: kind, capacity: sourceKeys.count))
        }
        guard !attributes.isEmpty, let entity = mapping.sourceEntity, let source = manager.sourceStore else {
            return columns
        }
        if let objects = sourceObjects {
            for object in objects {
                for (i, attribute) in attributes.enumerated() {
                    let own = object.entity.attributesByName[attribute.name]
                    try columns[i].append(try own.map { try object.storedValue(for: $0) } ?? .null, attribute)
                }
            }
            return columns
        }
        try readColumns(&columns, attributes, of: entity, from: source)
        return columns
    }

    /// The columns from the source table, one query over the batch's key range.
    private func readColumns(
        _ columns: inout [SourceBatchColumn], _ attributes: [AttributeDescription], of entity: EntityDescription,
        from source: PersistentStore
    ) throws {
        guard let low = sourceKeys.first, let high = sourceKeys.last else { return }
        // The statement's column of each attribute (nil: the attribute has none, every value is null).
        var selected: [String] = []
        var positions: [Int32?] = []
        for attribute in attributes {
            if let column = source.layout.column(for: attribute) {
                selected.append(SQLiteDatabase.quote(column))
                positions.append(Int32(selected.count))
            } else {
                positions.append(nil)
            }
        }
        let table = SQLiteDatabase.quote(source.layout.table(for: entity))
        let list = selected.isEmpty ? "" : ", " + selected.joined(separator: ", ")
        let statement = try source.database.prepare(
            "SELECT Z_PK\(list) FROM \(table) WHERE Z_PK BETWEEN ? AND ? ORDER BY Z_PK")
        defer { statement.reset() }
        try statement.bind([.integer(low), .integer(high)])
        // Whether each row's entity has each attribute (a sub-entity may lack one).
        let uniform = sourceEntities.allSatisfy { $0 === sourceEntities.first }
        var index = 0
        func appendNulls() {
            for i in columns.indices { columns[i].appendNull() }
            index += 1
        }
        while index < sourceKeys.count, try statement.step() {
            guard let h = statement.handle else { break }
            let key = sqlite3_column_int64(h, 0)
            while index < sourceKeys.count, sourceKeys[index] < key { appendNulls() }  // the row is gone
            guard index < sourceKeys.count, sourceKeys[index] == key else { continue }
            let rowEntity = sourceEntities[index]
            for i in columns.indices {
                guard let position = positions[i],
                    uniform && rowEntity === entity || rowEntity.attributesByName[attributes[i].name] != nil
                else {
                    columns[i].appendNull()
                    continue
                }
                try append(h, position, to: &columns[i], attributes[i], statement, key, table, source)
            }
            index += 1
        }
        while index < sourceKeys.count { appendNulls() }
    }

    /// One stored value: the common storage classes straight from SQLite, anything else as
    /// `values(ofAttribute:)` converts it.
    private func append(
        _ h: OpaquePointer, _ position: Int32, to column: inout SourceBatchColumn, _ attribute: AttributeDescription,
        _ statement: SQLiteStatement, _ key: Int64, _ table: String, _ source: PersistentStore
    ) throws {
        let storage = sqlite3_column_type(h, position)
        if storage == SQLITE_NULL {
            column.appendNull()
            return
        }
        switch (attribute.attributeType, storage) {
        case (.integer16, SQLITE_INTEGER), (.integer32, SQLITE_INTEGER), (.integer64, SQLITE_INTEGER):
            column.integers.append(sqlite3_column_int64(h, position))
            return
        case (.boolean, SQLITE_INTEGER):
            column.integers.append(sqlite3_column_int64(h, position) != 0 ? 1 : 0)
            return
        case (.double, SQLITE_FLOAT), (.float, SQLITE_FLOAT), (.date, SQLITE_FLOAT):
            column.appendDouble(sqlite3_column_double(h, position))
            return
        case (.double, SQLITE_INTEGER), (.float, SQLITE_INTEGER), (.date, SQLITE_INTEGER):
            column.doubles.append(Double(sqlite3_column_int64(h, position)))
            return
        case (.string, SQLITE_TEXT), (.uri, SQLITE_TEXT), (.decimal, SQLITE_TEXT):
            let count = Int(sqlite3_column_bytes(h, position))
            if let text = sqlite3_column_text(h, position) {
                let bytes = UnsafeBufferPointer(start: text, count: count)
                if UTF8Check.isValid(bytes) {
                    column.appendBytes(bytes)
                } else {
                    // Repaired as every other read of the store repairs it (U+FFFD for each bad sequence).
                    column.appendText(String(decoding: bytes, as: UTF8.self))
                }
                return
            }
        default:
            break
        }
        try column.append(
            try source.attributeValue(
                statement.value(at: Int(position), as: attribute.attributeType), of: attribute, table: table,
                primaryKey: key), attribute)
    }
}
