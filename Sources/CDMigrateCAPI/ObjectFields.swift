import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Bulk reads and writes of an instance's attributes, and its identity: what policies ported from
// Core Data do with instances made earlier.

/// The bytes a field's data points at for a value, if any.
private func payload(_ value: Value) -> [UInt8]? {
    switch value {
    case .string(let s), .uri(let s), .decimal(let s): return Array(s.utf8)
    case .binary(let b), .uuid(let b): return b
    default: return nil
    }
}

@_cdecl("cdm_object_get_fields")
public func cdm_object_get_fields(
    _ o: OpaquePointer?, _ fields: UnsafeMutableRawPointer?, _ capacity: Int, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        let count = try required(count, "count")
        let attributes = entry.object.entity.attributes
        count.pointee = attributes.count
        let n = min(max(capacity, 0), attributes.count)
        guard n > 0 else { return }
        guard let fields = fields?.bindMemory(to: CField.self, capacity: n) else {
            throw MigrationError.misuse("the fields array is NULL")
        }
        let values = try attributes.prefix(n).map { try entry.object.value(for: $0) }
        // One block for every text and byte value, each NUL-terminated.
        let payloads = values.map(payload)
        let size = payloads.reduce(0) { $0 + ($1.map { $0.count + 1 } ?? 0) }
        guard let block = entry.newFieldsBuffer(size) else {
            throw MigrationError(.io, "out of memory reading \(n) attributes")
        }
        var offset = 0
        for i in 0..<n {
            let value = values[i]
            var field = CField(
                name: CString.interned(attributes[i].name), index: Int32(i), type: ValueTypeCode.of(value),
                integer: 0, number: 0, data: nil, length: 0, object: nil)
            switch value {
            case .bool(let b): field.integer = b ? 1 : 0
            case .integer(let v): field.integer = v
            case .double(let d), .date(let d): field.number = d
            default: break
            }
            if let bytes = payloads[i] {
                let target = block + offset
                bytes.withUnsafeBytes {
                    if let base = $0.baseAddress { target.copyMemory(from: base, byteCount: $0.count) }
                }
                target.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
                field.data = UnsafeRawPointer(target)
                field.length = bytes.count
                offset += bytes.count + 1
            }
            fields[i] = field
        }
    }
}

@_cdecl("cdm_object_set_fields")
public func cdm_object_set_fields(_ o: OpaquePointer?, _ fields: UnsafeRawPointer?, _ count: Int, _ flags: Int32)
    -> Int32
{
    withEntry(o, ObjectEntry.self, "object") { entry in
        try setFields(entry.object, fields?.assumingMemoryBound(to: CField.self), count, flags)
    }
}

/// enum cdm_store_kind.
enum StoreKind {
    static let other: Int32 = 0
    static let source: Int32 = 1
    static let destination: Int32 = 2
}

@_cdecl("cdm_object_id")
public func cdm_object_id(
    _ o: OpaquePointer?, _ store: UnsafeMutablePointer<Int32>?, _ entity: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ primaryKey: UnsafeMutablePointer<Int64>?
) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        let id = entry.object.objectID
        var kind = StoreKind.other
        if let manager = entry.migrationManager {
            if let destination = manager.destinationStore, destination.storeIdentifier == id.storeIdentifier {
                kind = StoreKind.destination
            } else if let source = manager.sourceStore, source.storeIdentifier == id.storeIdentifier {
                kind = StoreKind.source
            }
        }
        store?.pointee = kind
        entity?.pointee = CString.interned(id.entityName)
        primaryKey?.pointee = id.primaryKey
    }
}
