import CDMigrate

/// cdm_mapping: a mapping model, or the errors of one that failed to load.
final class MappingHandle: LongLivedHandle {
    override class var kind: String { "cdm_mapping" }
    var mapping: MappingModel?
    private(set) lazy var names: [UnsafeMutablePointer<CChar>] = (mapping?.entityMappings ?? []).map {
        CString.copy($0.name)
    }

    deinit { for name in names { name.deallocate() } }

    static func loaded(_ pointer: OpaquePointer?) throws -> MappingModel {
        let handle = try required(pointer, "mapping")
        guard let mapping = handle.mapping else {
            throw MigrationError.misuse("the mapping handle holds a mapping model that failed to load")
        }
        return mapping
    }
}

@_cdecl("cdm_mapping_from_json")
public func cdm_mapping_from_json(_ json: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32
{
    construct(out, MappingHandle()) {
        $0.mapping = try MappingModel(json: try CString.argument(json, "the mapping JSON"))
    }
}

@_cdecl("cdm_mapping_from_file")
public func cdm_mapping_from_file(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32
{
    construct(out, MappingHandle()) {
        $0.mapping = try MappingModel(contentsOf: try CString.argument(path, "the mapping path"))
    }
}

@_cdecl("cdm_mapping_from_xcode_file")
public func cdm_mapping_from_xcode_file(
    _ path: UnsafePointer<CChar>?, _ source: OpaquePointer?, _ destination: OpaquePointer?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    construct(out, MappingHandle()) {
        $0.mapping = try MappingModel(
            contentsOf:
                try CString.argument(path, "the mapping path"),
            sourceModel: try ModelHandle.loaded(source, "source model"),
            destinationModel: try ModelHandle.loaded(destination, "destination model"))
    }
}

@_cdecl("cdm_mapping_free")
public func cdm_mapping_free(_ mapping: OpaquePointer?) { MappingHandle.release(mapping, "mapping") }

@_cdecl("cdm_mapping_validate")
public func cdm_mapping_validate(_ mapping: OpaquePointer?, _ source: OpaquePointer?, _ destination: OpaquePointer?)
    -> Int32
{
    withHandle(mapping, MappingHandle.self, "mapping") { handle in
        guard let model = handle.mapping else {
            throw MigrationError.misuse("the mapping handle holds a mapping model that failed to load")
        }
        try model.validate(
            sourceModel: try ModelHandle.loaded(source, "source model"),
            destinationModel: try ModelHandle.loaded(destination, "destination model"))
    }
}

@_cdecl("cdm_mapping_errcode")
public func cdm_mapping_errcode(_ mapping: OpaquePointer?) -> Int32 {
    MappingHandle.unretained(mapping)?.errcode ?? 101
}
@_cdecl("cdm_mapping_errmsg")
public func cdm_mapping_errmsg(_ mapping: OpaquePointer?) -> UnsafePointer<CChar> {
    MappingHandle.unretained(mapping)?.errmsg
        ?? CString.interned("the mapping handle is NULL or not a live cdm_mapping")
}
@_cdecl("cdm_mapping_error")
public func cdm_mapping_error(_ mapping: OpaquePointer?) -> OpaquePointer? {
    MappingHandle.unretained(mapping)?.lastError?.pointer
}

@_cdecl("cdm_mapping_entity_mapping_count")
public func cdm_mapping_entity_mapping_count(_ mapping: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    guarded(nil) {
        let loaded = try MappingHandle.loaded(mapping)
        try required(count, "count").pointee = loaded.entityMappings.count
    }
}

@_cdecl("cdm_mapping_entity_mapping_at")
public func cdm_mapping_entity_mapping_at(
    _ mapping: OpaquePointer?, _ i: Int, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    guarded(nil) {
        let handle = try MappingHandle.required(mapping, "mapping")
        _ = try MappingHandle.loaded(mapping)
        let out = try required(name, "name")
        let names = handle.names
        guard i >= 0, i < names.count else {
            throw MigrationError.notFound(
                "entity mapping index \(i) is out of range: the mapping model has \(names.count)")
        }
        out.pointee = UnsafePointer(names[i])
    }
}
