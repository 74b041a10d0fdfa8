import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The C API's own result codes (cdmigrate.h, enum cdm_result, 101…): wrong use by the host,
/// told apart from the engine's errors so a host can react to them.
extension MigrationError.Code {
    static let misuse = MigrationError.Code(rawValue: 101)
    static let notFound = MigrationError.Code(rawValue: 102)
    static let mismatch = MigrationError.Code(rawValue: 103)
    static let encoding = MigrationError.Code(rawValue: 104)

    /// The short name cdm_errstr gives.
    var capiName: String {
        switch self {
        case .misuse: return "misuse of the C API"
        case .notFound: return "not found"
        case .mismatch: return "type mismatch"
        case .encoding: return "invalid UTF-8"
        default: return rawValue == 0 ? "not an error" : name
        }
    }
}

extension MigrationError {
    static func misuse(_ message: String) -> MigrationError { MigrationError(.misuse, message) }
    static func notFound(_ message: String) -> MigrationError { MigrationError(.notFound, message) }
    static func mismatch(_ message: String) -> MigrationError { MigrationError(.mismatch, message) }
}

/// A `MigrationError` with its strings as C strings, so `cdm_error_*` can hand out pointers that
/// stay valid as long as the record is kept (by its handle and by the thread's last error).
final class ErrorRecord {
    let code: Int32
    let message: UnsafeMutablePointer<CChar>
    let path: UnsafeMutablePointer<CChar>?
    /// The UTF-8 byte offset in the expression or predicate at fault, -1 for none.
    let offset: Int32
    let underlying: [ErrorRecord]
    /// The instance and property of an individual validation error (ValidationErrorSubject.swift).
    let subject: SubjectStrings?

    init(_ error: MigrationError) {
        code = error.code.rawValue
        message = CString.copy(error.description(withUnderlying: false))
        path = error.path.map { CString.copy($0) }
        offset = error.byteOffset.map { Int32(clamping: $0) } ?? -1
        underlying = error.underlying.map { ErrorRecord($0) }
        subject = error.validationSubject.map { SubjectStrings($0) }
    }

    deinit {
        free(message)
        free(path)
    }

    var pointer: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    static func from(_ pointer: OpaquePointer?) -> ErrorRecord? {
        guard let pointer = pointer else { return nil }
        return Unmanaged<ErrorRecord>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
    }
}

extension MigrationError {
    /// The message with its position, as one line (the underlying problems are listed apart).
    func description(withUnderlying: Bool) -> String {
        var text = message
        if let path = path { text += " (at \(path))" }
        if let offset = offset { text += " (at character \(offset))" }
        if withUnderlying { for error in underlying { text += "; " + error.description(withUnderlying: true) } }
        return text
    }
}

/// Whatever keeps a last error: every long-lived handle and every callback context.
class ErrorSink {
    var lastError: ErrorRecord?

    /// Keeps the error here and as the thread's last error; returns its code.
    @discardableResult
    func record(_ error: MigrationError) -> Int32 {
        let record = ErrorRecord(error)
        lastError = record
        ThreadState.current.lastError = record
        return record.code
    }

    var errcode: Int32 { lastError?.code ?? 0 }
    var errmsg: UnsafePointer<CChar> { lastError.map { UnsafePointer($0.message) } ?? CString.empty }
}

/// Runs the body of a C entry point: a thrown error becomes the result code, kept by `sink`
/// (or only as the thread's last error when there is none). `sink` is evaluated only when there
/// is an error to keep.
@inline(__always)
func guarded(_ sink: @autoclosure () -> ErrorSink?, _ body: () throws -> Void) -> Int32 {
    do {
        try body()
        return 0
    } catch {
        return recordError(error, sink())
    }
}

@discardableResult
func recordError(_ error: Error, _ sink: ErrorSink?) -> Int32 {
    let migrationError = error as? MigrationError ?? MigrationError(.entityMigrationPolicy, "\(error)")
    if let sink = sink { return sink.record(migrationError) }
    let record = ErrorRecord(migrationError)
    ThreadState.current.lastError = record
    return record.code
}

// MARK: C entry points

@_cdecl("cdm_errstr")
public func cdm_errstr(_ code: Int32) -> UnsafePointer<CChar> {
    CString.interned(MigrationError.Code(rawValue: code).capiName)
}

@_cdecl("cdm_error_code")
public func cdm_error_code(_ error: OpaquePointer?) -> Int32 { ErrorRecord.from(error)?.code ?? 0 }

@_cdecl("cdm_error_message")
public func cdm_error_message(_ error: OpaquePointer?) -> UnsafePointer<CChar> {
    ErrorRecord.from(error).map { UnsafePointer($0.message) } ?? CString.empty
}

@_cdecl("cdm_error_path")
public func cdm_error_path(_ error: OpaquePointer?) -> UnsafePointer<CChar>? {
    ErrorRecord.from(error)?.path.map { UnsafePointer($0) }
}

@_cdecl("cdm_error_offset")
public func cdm_error_offset(_ error: OpaquePointer?) -> Int32 { ErrorRecord.from(error)?.offset ?? -1 }

@_cdecl("cdm_error_count")
public func cdm_error_count(_ error: OpaquePointer?) -> Int { ErrorRecord.from(error)?.underlying.count ?? 0 }

@_cdecl("cdm_error_at")
public func cdm_error_at(_ error: OpaquePointer?, _ i: Int) -> OpaquePointer? {
    guard let record = ErrorRecord.from(error), i >= 0, i < record.underlying.count else { return nil }
    return record.underlying[i].pointer
}

@_cdecl("cdm_last_errcode")
public func cdm_last_errcode() -> Int32 { ThreadState.current.lastError?.code ?? 0 }

@_cdecl("cdm_last_errmsg")
public func cdm_last_errmsg() -> UnsafePointer<CChar> {
    ThreadState.current.lastError.map { UnsafePointer($0.message) } ?? CString.empty
}

@_cdecl("cdm_last_error")
public func cdm_last_error() -> OpaquePointer? { ThreadState.current.lastError?.pointer }
