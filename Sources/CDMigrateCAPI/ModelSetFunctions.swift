import CDMigrate

/// A model set as the JSON files of a folder model set (`ModelSetJSON`): what `cdmigrate import`
/// writes for an `.xcdatamodeld` or a `.momd`, for hosts that write the folder themselves.
enum ModelSetFilesJSON {
    static func document(_ set: ModelSetJSON) -> JSON {
        .object([
            ("versions", .array(set.versionNames.map { .string($0) })),
            ("currentVersion", .string(set.currentVersionName)),
            (
                "mappingModels",
                .array(
                    set.mappingModels.map { m in
                        .object([
                            ("name", .string(m.name)), ("from", .string(m.step.sourceVersionName)),
                            ("to", .string(m.step.destinationVersionName)),
                        ])
                    })
            ),
            ("files", .array(set.files.map { f in .object([("name", .string(f.name)), ("text", .string(f.text))]) })),
            ("warnings", .array(set.warnings.map { .string($0) })),
        ])
    }
}

@_cdecl("cdm_model_set_json")
public func cdm_model_set_json(
    _ models: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    cdm_model_set_json_with_mappings(models, nil, out)
}

@_cdecl("cdm_model_set_json_with_mappings")
public func cdm_model_set_json_with_mappings(
    _ models: UnsafePointer<CChar>?, _ mappingDirs: UnsafePointer<UnsafePointer<CChar>?>?,
    _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    do {
        let out = try required(out, "set_json")
        out.pointee = nil
        let set = try ModelSetJSON(
            contentsOf: try CString.argument(models, "the models path"),
            mappingFolders: try CString.folders(mappingDirs))
        out.pointee = CString.copy(ModelSetFilesJSON.document(set).serialized())
        return 0
    } catch {
        return recordError(error, nil)
    }
}
