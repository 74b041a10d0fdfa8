import CDMigrate
import CJansson

/// `cdm_policy.create_destination_instances_batch`: (context, batch, user).
public typealias BatchHookFunction = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Int32

/// cdm_batch: the source rows of one call of a policy's batch hook (`SourceBatch`), valid during it.
final class BatchEntry: HandleEntry {
    override class var kind: String { "cdm_batch" }
    let batch: SourceBatch
    let manager: MigrationManager
    /// The source keys as a C array, made at the first cdm_batch_source_keys.
    var keys: UnsafeMutablePointer<Int64>?

    init(_ batch: SourceBatch, manager: MigrationManager) {
        self.batch = batch
        self.manager = manager
    }

    /// The scope of the hook call the batch was handed to (where its arrays live).
    func liveScope() throws -> Scope {
        guard let scope = scope else { throw MigrationError.misuse("the batch's hook has returned") }
        return scope
    }
}

/// Bulk values across the C boundary: int64 arrays and JSON texts, so that a host pays one call
/// per array, not one per value.
enum BatchTransfer {
    /// A C array of `keys`, valid as long as `scope` (never NULL: an empty array is one slot).
    static func array(_ keys: [Int64], in scope: Scope) throws -> UnsafeMutablePointer<Int64> {
        guard let raw = malloc(max(keys.count, 1) * MemoryLayout<Int64>.stride) else {
            throw MigrationError(.migration, "out of memory for \(keys.count) keys")
        }
        scope.keep(raw)
        let array = raw.bindMemory(to: Int64.self, capacity: max(keys.count, 1))
        for (i, key) in keys.enumerated() { array[i] = key }
        return array
    }

    /// A text column as C arrays valid as long as `scope`: one NUL-terminated copy of each text
    /// (NULL for a null) and their byte lengths (0 for a null), in one allocation of texts.
    static func texts(_ values: [Value], in scope: Scope) throws -> (
        texts: UnsafePointer<UnsafePointer<CChar>?>, lengths: UnsafePointer<Int>
    ) {
        let slots = max(values.count, 1)
        var total = 0
        for value in values {
            switch value {
            case .string(let s), .uri(let s), .decimal(let s): total += s.utf8.count + 1
            default: break
            }
        }
        // Each block belongs to the scope as soon as it exists, so a later failure frees it too.
        func allocate(_ size: Int) throws -> UnsafeMutableRawPointer {
            guard let raw = malloc(size) else {
                throw MigrationError(.migration, "out of memory for a column of \(values.count) texts")
            }
            scope.keep(raw)
            return raw
        }
        let pointerRaw = try allocate(slots * MemoryLayout<UnsafePointer<CChar>?>.stride)
        let lengthRaw = try allocate(slots * MemoryLayout<Int>.stride)
        let byteRaw = try allocate(max(total, 1))
        let pointers = pointerRaw.bindMemory(to: UnsafePointer<CChar>?.self, capacity: slots)
        let lengths = lengthRaw.bindMemory(to: Int.self, capacity: slots)
        let bytes = byteRaw.bindMemory(to: CChar.self, capacity: max(total, 1))
        var offset = 0
        for (index, value) in values.enumerated() {
            switch value {
            case .string(let s), .uri(let s), .decimal(let s):
                let start = bytes + offset
                var length = 0
                for byte in s.utf8 {
                    start[length] = CChar(bitPattern: byte)
                    length += 1
                }
                start[length] = 0
                pointers[index] = UnsafePointer(start)
                lengths[index] = length
                offset += length + 1
            default:
                pointers[index] = nil
                lengths[index] = 0
            }
        }
        return (UnsafePointer(pointers), UnsafePointer(lengths))
    }

    /// The host's array of `count` keys.
    static func keys(_ pointer: UnsafePointer<Int64>?, _ count: Int, _ what: String) throws -> [Int64] {
        guard count >= 0 else {
            throw MigrationError.misuse("the \(what) count \(UInt(bitPattern: count)) is not a count")
        }
        guard count > 0 else { return [] }
        guard let pointer = pointer else { throw MigrationError.misuse("the \(what) array is NULL") }
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }

    /// A column value as JSON: dates as seconds since 2001 (a number), binary data as base64,
    /// decimals, UUIDs and URIs as text.
    static func json(_ value: Value) -> JSON { ValueJSON.json(value, dates: .referenceSeconds) }

    /// The JSON array text of `values` (as `json(_:)` writes each), written directly: a column of
    /// thousands of values is one pass over their bytes.
    static func jsonText(_ values: [Value]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(values.count * 16 + 2)
        func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
        func appendString(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(byte)
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: Array("\\u00".utf8))
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                default:
                    bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            switch value {
            case .null: append("null")
            case .bool(let b): append(b ? "true" : "false")
            case .integer(let i): append(String(i))
            case .double(let d), .date(let d): append(d.isFinite ? "\(d)" : "null")
            case .decimal(let s), .string(let s), .uri(let s): appendString(s)
            default: append(json(value).serialized())
            }
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A JSON value for `attribute`, read as `json(_:)` writes it (a date may also be ISO 8601 text).
    static func value(_ json: JSON, for attribute: AttributeDescription, _ place: @autoclosure () -> String) throws
        -> Value
    {
        switch (json, attribute.attributeType) {
        case (.null, _): return .null
        case (.bool(let b), _): return .bool(b)
        case (.integer(let i), _): return .integer(i)
        case (.double(let d), _): return .double(d)
        case (.string(let s), .date):
            guard let seconds = DateConversion.parseISO8601(s) else {
                throw MigrationError(.invalidArgument, "\(place()): '\(s)' is not an ISO 8601 date")
            }
            return .date(seconds)
        case (.string(let s), .binary), (.string(let s), .transformable):
            guard let bytes = Base64.decode(s) else {
                throw MigrationError(.invalidArgument, "\(place()): the text is not base64")
            }
            return .binary(bytes)
        case (.string(let s), .decimal): return .decimal(s)
        case (.string(let s), _): return .string(s)
        case (.array, _), (.object, _):
            throw MigrationError(.invalidArgument, "\(place()): an attribute cannot take a JSON array or object")
        }
    }
}

private func withBatch(_ handle: OpaquePointer?, _ body: (BatchEntry) throws -> Void) -> Int32 {
    withEntry(handle, BatchEntry.self, "batch") { entry in try body(entry) }
}

@_cdecl("cdm_batch_count")
public func cdm_batch_count(_ batch: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    withBatch(batch) { entry in try required(count, "count").pointee = entry.batch.count }
}

@_cdecl("cdm_batch_source_keys")
public func cdm_batch_source_keys(
    _ batch: OpaquePointer?, _ keys: UnsafeMutablePointer<UnsafePointer<Int64>?>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withBatch(batch) { entry in
        let out = try required(keys, "keys")
        let count = try required(count, "count")
        if entry.keys == nil { entry.keys = try BatchTransfer.array(entry.batch.sourceKeys, in: try entry.liveScope()) }
        out.pointee = UnsafePointer(entry.keys)
        count.pointee = entry.batch.count
    }
}

@_cdecl("cdm_batch_column_json")
public func cdm_batch_column_json(
    _ batch: OpaquePointer?, _ attribute: UnsafePointer<CChar>?, _ json: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withBatch(batch) { entry in
        let out = try required(json, "json")
        let name = try CString.argument(attribute, "the attribute name")
        guard let entity = entry.batch.mapping.sourceEntity,
            entity.selfAndDescendants.contains(where: { $0.attributesByName[name] != nil })
        else {
            throw MigrationError.notFound(
                "entity mapping '\(entry.batch.mapping.name)': source entity '\(entry.batch.mapping.sourceEntityName ?? "")' has no attribute '\(name)'"
            )
        }
        let values = try entry.batch.values(ofAttribute: name)
        out.pointee = try entry.liveScope().string(BatchTransfer.jsonText(values))
    }
}

@_cdecl("cdm_batch_column_text")
public func cdm_batch_column_text(
    _ batch: OpaquePointer?, _ attribute: UnsafePointer<CChar>?,
    _ texts: UnsafeMutablePointer<UnsafePointer<UnsafePointer<CChar>?>?>?,
    _ lengths: UnsafeMutablePointer<UnsafePointer<Int>?>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withBatch(batch) { entry in
        let out = try required(texts, "texts")
        let countOut = try required(count, "count")
        let name = try CString.argument(attribute, "the attribute name")
        guard let entity = entry.batch.mapping.sourceEntity,
            let attribute = entity.selfAndDescendants.lazy.compactMap({ $0.attributesByName[name] }).first
        else {
            throw MigrationError.notFound(
                "entity mapping '\(entry.batch.mapping.name)': source entity '\(entry.batch.mapping.sourceEntityName ?? "")' has no attribute '\(name)'"
            )
        }
        switch attribute.attributeType {
        case .string, .uri, .decimal: break
        default:
            throw MigrationError.mismatch(
                "attribute '\(entity.name).\(name)' is of type \(attribute.attributeType.rawValue), not text (string, URI or decimal): read it with cdm_batch_column_json"
            )
        }
        let column = try BatchTransfer.texts(try entry.batch.values(ofAttribute: name), in: try entry.liveScope())
        out.pointee = column.texts
        lengths?.pointee = column.lengths
        countOut.pointee = entry.batch.count
    }
}

@_cdecl("cdm_batch_apply_default")
public func cdm_batch_apply_default(
    _ batch: OpaquePointer?, _ keys: UnsafeMutablePointer<UnsafePointer<Int64>?>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withBatch(batch) { entry in
        let made = try entry.batch.applyDefault()
        if let keys = keys { keys.pointee = UnsafePointer(try BatchTransfer.array(made, in: try entry.liveScope())) }
        count?.pointee = made.count
    }
}

@_cdecl("cdm_batch_apply_default_numbered")
public func cdm_batch_apply_default_numbered(
    _ batch: OpaquePointer?, _ keys: UnsafeMutablePointer<UnsafePointer<Int64>?>?,
    _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withBatch(batch) { entry in
        let made = try entry.batch.applyDefault(numbered: true)
        if let keys = keys { keys.pointee = UnsafePointer(try BatchTransfer.array(made, in: try entry.liveScope())) }
        count?.pointee = made.count
    }
}

@_cdecl("cdm_batch_associate")
public func cdm_batch_associate(
    _ batch: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ sourceKeys: UnsafePointer<Int64>?,
    _ destinationKeys: UnsafePointer<Int64>?, _ count: Int
) -> Int32 {
    withBatch(batch) { entry in
        let name = try CString.argument(entity, "the destination entity name")
        guard entry.manager.destinationModel.entity(named: name) != nil else {
            throw MigrationError.notFound("the destination model has no entity named '\(name)'")
        }
        try entry.batch.associate(
            destinationEntityName: name, sourceKeys: try BatchTransfer.keys(sourceKeys, count, "source key"),
            destinationKeys: try BatchTransfer.keys(destinationKeys, count, "destination key"))
    }
}

@_cdecl("cdm_context_create_instances_json")
public func cdm_context_create_instances_json(
    _ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ rows: UnsafePointer<CChar>?,
    _ keys: UnsafeMutablePointer<UnsafePointer<Int64>?>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withContext(ctx) { context, scope in
        let name = try CString.argument(entity, "the entity name")
        guard let described = context.manager.destinationModel.entity(named: name) else {
            throw MigrationError.notFound("the destination model has no entity named '\(name)'")
        }
        guard case .array(let items) = try JSON.parse(try CString.argument(rows, "the rows JSON")) else {
            throw MigrationError(.invalidJSON, "the rows JSON is not an array of objects")
        }
        var values: [[String: Value]] = []
        values.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard case .object(let members) = item else {
                throw MigrationError(.invalidJSON, "row \(index) of the rows JSON is not an object")
            }
            var row: [String: Value] = [:]
            for (key, json) in members {
                guard let attribute = described.attributesByName[key] else {
                    throw MigrationError.notFound("row \(index): entity '\(name)' has no attribute '\(key)'")
                }
                row[key] = try BatchTransfer.value(json, for: attribute, "row \(index), attribute '\(name).\(key)'")
            }
            values.append(row)
        }
        let made = try context.manager.createDestinationInstances(entityName: name, values: values)
        if let keys = keys { keys.pointee = UnsafePointer(try BatchTransfer.array(made, in: scope)) }
        count?.pointee = made.count
    }
}

@_cdecl("cdm_context_relate")
public func cdm_context_relate(
    _ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ relationship: UnsafePointer<CChar>?,
    _ owners: UnsafePointer<Int64>?, _ targets: UnsafePointer<Int64>?, _ count: Int
) -> Int32 {
    withContext(ctx) { context, _ in
        let name = try CString.argument(entity, "the entity name")
        let relationshipName = try CString.argument(relationship, "the relationship name")
        guard let described = context.manager.destinationModel.entity(named: name) else {
            throw MigrationError.notFound("the destination model has no entity named '\(name)'")
        }
        guard described.relationshipsByName[relationshipName] != nil else {
            throw MigrationError.notFound("destination entity '\(name)' has no relationship '\(relationshipName)'")
        }
        try context.manager.relate(
            entityName: name, relationshipName: relationshipName,
            owners: try BatchTransfer.keys(owners, count, "owner key"),
            targets: try BatchTransfer.keys(targets, count, "target key"))
    }
}

@_cdecl("cdm_migration_set_batch_size")
public func cdm_migration_set_batch_size(_ migration: OpaquePointer?, _ size: Int) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        guard size > 0 else {
            throw MigrationError(.invalidArgument, "the batch size must be at least 1, not \(UInt(bitPattern: size))")
        }
        if let chain = handle.chain {
            try handle.checkIdle()
            chain.batchSize = size
        } else {
            try handle.idleManager().batchSize = size
        }
    }
}
