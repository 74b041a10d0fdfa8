import CSQLite

/// The SQL of every statement any connection opened meanwhile starts (`sqlite3_trace_v2` set on
/// each new connection through `sqlite3_auto_extension`).
enum StatementTrace {
    nonisolated(unsafe) private static var statements: [String] = []

    private static let traceStatement:
        @convention(c) (UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32 =
            {
                _, _, statement, _ in
                if let statement, let sql = sqlite3_sql(OpaquePointer(statement)) {
                    StatementTrace.statements.append(String(cString: sql))
                }
                return 0
            }

    private static let onOpen:
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, OpaquePointer?) -> Int32 =
            {
                db, _, _ in
                sqlite3_trace_v2(db, UInt32(SQLITE_TRACE_STMT), StatementTrace.traceStatement, nil)
                return SQLITE_OK
            }

    /// Runs `body` with every connection it opens traced: its result and the statements started.
    static func during<T>(_ body: () throws -> T) rethrows -> (T, [String]) {
        statements = []
        let entry = unsafeBitCast(onOpen, to: (@convention(c) () -> Void).self)
        sqlite3_auto_extension(entry)
        defer { sqlite3_cancel_auto_extension(entry) }
        let result = try body()
        return (result, statements)
    }
}
