import CDMigrate

// Models and mapping models written out as JSON (docs/model-format.md, docs/mapping-format.md),
// and the mapping model Core Data would infer. Lookups on shared handles record only the
// thread's last error, as the other model and mapping getters do.

@_cdecl("cdm_model_json")
public func cdm_model_json(_ model: OpaquePointer?, _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
    -> Int32
{
    guarded(nil) {
        let loaded = try ModelHandle.loaded(model)
        try required(json, "json").pointee = CString.copy(loaded.jsonText())
    }
}

@_cdecl("cdm_mapping_json")
public func cdm_mapping_json(_ mapping: OpaquePointer?, _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
    -> Int32
{
    guarded(nil) {
        let loaded = try MappingHandle.loaded(mapping)
        try required(json, "json").pointee = CString.copy(loaded.jsonText())
    }
}

@_cdecl("cdm_mapping_infer")
public func cdm_mapping_infer(
    _ source: OpaquePointer?, _ destination: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    construct(out, MappingHandle()) {
        $0.mapping = try MappingModel.inferred(
            from: try ModelHandle.loaded(source, "source model"),
            to: try ModelHandle.loaded(destination, "destination model"))
    }
}
