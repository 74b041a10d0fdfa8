import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Columns of a batch as flat C arrays (cdm_batch_columns): each column's arrays copied once into
/// memory of the hook's scope.
enum BatchColumnTransfer {
    /// A copy of `values` valid as long as `scope` (never NULL: an empty array is one zero byte,
    /// an empty C string).
    static func copy<T>(_ values: [T], in scope: Scope) throws -> UnsafeRawPointer {
        let size = values.count * MemoryLayout<T>.stride
        guard let raw = malloc(max(size, 1)) else {
            throw MigrationError(.migration, "out of memory for a column of \(values.count) values")
        }
        scope.keep(raw)
        if size == 0 { raw.storeBytes(of: 0, as: UInt8.self) }
        values.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, size > 0 { raw.copyMemory(from: base, byteCount: size) }
        }
        return UnsafeRawPointer(raw)
    }

    /// The attribute of the batch's source entity (or of a sub-entity) named `name`, checked to
    /// have values of its own.
    static func attribute(_ name: String, of batch: SourceBatch) throws -> AttributeDescription {
        guard let entity = batch.mapping.sourceEntity,
            let attribute = entity.selfAndDescendants.lazy.compactMap({ $0.attributesByName[name] }).first
        else {
            throw MigrationError.notFound(
                "entity mapping '\(batch.mapping.name)': source entity '\(batch.mapping.sourceEntityName ?? "")' has no attribute '\(name)'"
            )
        }
        guard SourceBatchColumn.Kind(attribute.attributeType) != nil else {
            throw MigrationError.mismatch(
                "attribute '\(attribute.entity?.name ?? entity.name).\(name)' is of type \(attribute.attributeType.rawValue), which has no values of its own to read as a column: read it with cdm_batch_column_json"
            )
        }
        return attribute
    }
}

@_cdecl("cdm_batch_columns")
public func cdm_batch_columns(
    _ batch: OpaquePointer?, _ attributes: UnsafePointer<UnsafePointer<CChar>?>?, _ attributeCount: Int,
    _ kinds: UnsafeMutablePointer<Int32>?, _ values: UnsafeMutablePointer<UnsafeRawPointer?>?,
    _ bytes: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ nulls: UnsafeMutablePointer<UnsafePointer<Int64>?>?,
    _ nullCounts: UnsafeMutablePointer<Int>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withEntry(batch, BatchEntry.self, "batch") { entry in
        let countOut = try required(count, "count")
        guard attributeCount >= 0 else {
            throw MigrationError.misuse("the attribute count \(UInt(bitPattern: attributeCount)) is not a count")
        }
        var names: [String] = []
        if attributeCount > 0 {
            guard let attributes = attributes else { throw MigrationError.misuse("the attributes array is NULL") }
            _ = try required(kinds, "kinds")
            _ = try required(values, "values")
            for i in 0..<attributeCount {
                let name = try CString.argument(attributes[i], "attribute name \(i)")
                _ = try BatchColumnTransfer.attribute(name, of: entry.batch)
                names.append(name)
            }
        }
        let columns = try entry.batch.columns(ofAttributes: names)
        let scope = try entry.liveScope()
        for (i, column) in columns.enumerated() {
            kinds?[i] = column.kind.rawValue
            switch column.kind {
            case .integer: values?[i] = try BatchColumnTransfer.copy(column.integers, in: scope)
            case .double: values?[i] = try BatchColumnTransfer.copy(column.doubles, in: scope)
            case .text, .bytes: values?[i] = try BatchColumnTransfer.copy(column.offsets, in: scope)
            }
            if let bytes = bytes {
                let copied = try BatchColumnTransfer.copy(column.bytes, in: scope)
                bytes[i] = copied.assumingMemoryBound(to: CChar.self)
            }
            if let nulls = nulls {
                nulls[i] = try BatchColumnTransfer.copy(column.nulls, in: scope).assumingMemoryBound(to: Int64.self)
            }
            nullCounts?[i] = column.nulls.count
        }
        countOut.pointee = entry.batch.count
    }
}
