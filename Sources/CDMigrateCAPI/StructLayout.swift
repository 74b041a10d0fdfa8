// The test hooks of include/cdmigrate_internal.h that compare the Swift mirrors of the header's
// structs with C's layout of them (the C tests, the Python binding at import, scripts/check-abi.py).
// A struct added to the header gets its mirror here too: scripts/check-abi.py fails on a struct
// this switch does not know.

/// The Swift mirror's stride of a struct of cdmigrate.h (C's sizeof includes the tail padding,
/// as the stride does); 0 for an unknown name.
@_cdecl("cdm_internal_struct_size")
public func cdm_internal_struct_size(_ name: UnsafePointer<CChar>?) -> Int {
    switch name.map({ String(cString: $0) }) {
    case "cdm_field": return MemoryLayout<CField>.stride
    case "cdm_attribute_info": return MemoryLayout<AttributeInfo>.stride
    case "cdm_relationship_info": return MemoryLayout<RelationshipInfo>.stride
    case "cdm_sort_descriptor": return MemoryLayout<CSortDescriptor>.stride
    case "cdm_store_entity_info": return MemoryLayout<StoreEntityInfo>.stride
    case "cdm_version_difference": return MemoryLayout<VersionDifferenceInfo>.stride
    case "cdm_policy": return MemoryLayout<PolicyHooks>.stride
    case "cdm_progress": return MemoryLayout<ProgressRecord>.stride
    case "cdm_command_line_options": return MemoryLayout<CommandLineOptions>.stride
    default: return 0
    }
}

/// 0 when the host's cdm_policy and cdm_progress have the library's sizes, 1 otherwise.
@_cdecl("cdm_internal_abi_check")
public func cdm_internal_abi_check(_ policySize: Int, _ progressSize: Int) -> Int32 {
    (policySize == MemoryLayout<PolicyHooks>.stride && progressSize == MemoryLayout<ProgressRecord>.stride) ? 0 : 1
}
