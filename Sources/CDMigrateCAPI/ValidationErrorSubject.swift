import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An individual validation error's instance and property as C strings, owned by its ErrorRecord.
final class SubjectStrings {
    let entity: UnsafeMutablePointer<CChar>
    let uri: UnsafeMutablePointer<CChar>
    let key: UnsafeMutablePointer<CChar>
    let primaryKey: Int64

    init(_ subject: ValidationSubject) {
        entity = CString.copy(subject.entityName)
        uri = CString.copy(subject.objectURI)
        key = CString.copy(subject.key)
        primaryKey = subject.primaryKey
    }

    deinit {
        free(entity)
        free(uri)
        free(key)
    }
}

@_cdecl("cdm_error_entity")
public func cdm_error_entity(_ error: OpaquePointer?) -> UnsafePointer<CChar>? {
    ErrorRecord.from(error)?.subject.map { UnsafePointer($0.entity) }
}

@_cdecl("cdm_error_object_uri")
public func cdm_error_object_uri(_ error: OpaquePointer?) -> UnsafePointer<CChar>? {
    ErrorRecord.from(error)?.subject.map { UnsafePointer($0.uri) }
}

@_cdecl("cdm_error_key")
public func cdm_error_key(_ error: OpaquePointer?) -> UnsafePointer<CChar>? {
    ErrorRecord.from(error)?.subject.map { UnsafePointer($0.key) }
}

@_cdecl("cdm_error_primary_key")
public func cdm_error_primary_key(_ error: OpaquePointer?) -> Int64 {
    ErrorRecord.from(error)?.subject?.primaryKey ?? 0
}
