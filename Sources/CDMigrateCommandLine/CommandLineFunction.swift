import CDMigrate
import CDMigrateCAPI

#if canImport(Glibc)
    import Glibc
#endif

/// `cdm_command_line_run`: the `cdmigrate` command line (docs/cli.md) for a host program, which
/// then runs exactly what the executable runs. Output goes to the process's standard output and
/// standard error; the result is the exit status. With `options`, a fleet run's children run the
/// host's command and `--policies` values go to the host's loader first.
///
/// - Parameters:
///   - argc: the number of arguments in `argv`.
///   - argv: the program's name, then its arguments (as `main` gets them); UTF-8.
///   - options: a `cdm_command_line_options`, or NULL for the executable's behaviour.
///   - optionsSize: `sizeof(cdm_command_line_options)` (0 with NULL options).
/// - Returns: the exit status (0, 1, 64, 65, 66, 74, or 128 + a signal); 64 for arguments that are
///   NULL or not UTF-8, or options of an unknown size.
@_cdecl("cdm_command_line_run")
public func cdm_command_line_run(
    _ argc: Int32, _ argv: UnsafePointer<UnsafePointer<CChar>?>?,
    _ options: UnsafeRawPointer?, _ optionsSize: Int
) -> Int32 {
    guard let arguments = commandLineTexts(argv, count: Int(argc)), !arguments.isEmpty else {
        return commandLineMisuse("argv must hold argc UTF-8 texts, the program's name first")
    }
    var host = CommandLineHost()
    if let options = options {
        guard optionsSize == MemoryLayout<CommandLineOptions>.stride else {
            return commandLineMisuse(
                "options_size \(optionsSize) is not the size of a cdm_command_line_options (\(MemoryLayout<CommandLineOptions>.stride))"
            )
        }
        let given = options.loadUnaligned(as: CommandLineOptions.self)
        if given.childCommandCount > 0 {
            guard let child = commandLineTexts(given.childCommand, count: given.childCommandCount) else {
                return commandLineMisuse("child_command must hold child_command_count UTF-8 texts")
            }
            host.childCommand = child
        }
        if let loader = given.loadPolicies {
            let user = given.user
            host.loadPolicies = { name, hosted in
                var message: UnsafePointer<CChar>? = nil
                let code = name.withCString { loader(user, $0, OpaquePointer(hosted.pointer), &message) }
                if code == 0 { return true }
                if code == 102 { return false }  // CDM_NOTFOUND: not the host's; a shared library
                let detail = message.map {
                    String(
                        decoding: UnsafeBufferPointer(
                            start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: strlen($0)),
                        as: UTF8.self)
                }
                throw MigrationError(
                    MigrationError.Code(rawValue: code),
                    detail.map { "cannot load the policies '\(name)': \($0)" }
                        ?? "cannot load the policies '\(name)' (code \(code))")
            }
        }
    }
    return CommandLineRun.run(arguments: Array(arguments.dropFirst()), host: host)
}

/// `count` NUL-terminated UTF-8 texts, nil when one is NULL or not UTF-8 (or count < 0).
private func commandLineTexts(_ pointer: UnsafePointer<UnsafePointer<CChar>?>?, count: Int) -> [String]? {
    guard count >= 0, let pointer = pointer else { return count == 0 ? [] : nil }
    var texts: [String] = []
    for index in 0..<count {
        guard let text = pointer[index] else { return nil }
        let bytes = UnsafeBufferPointer(
            start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
        guard let value = String(validating: bytes, as: UTF8.self) else { return nil }
        texts.append(value)
    }
    return texts
}

private func commandLineMisuse(_ message: String) -> Int32 {
    fputs("cdmigrate: \(message)\n", stderr)
    return ExitStatus.usage.rawValue
}
