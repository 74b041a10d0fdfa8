import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// The `cdmigrate` command line as a function: the executable, the C API's
/// `cdm_command_line_run` and Python's `python -m cdmigrate` all run it.
public enum CommandLineRun {
    /// Runs one command as the `cdmigrate` executable would, printing to standard output and
    /// standard error, without ending the process.
    ///
    /// - Parameter arguments: the arguments after the program's name (`["migrate", "a.sqlite", …]`).
    /// - Returns: the exit status docs/cli.md documents (0 success, 1 failed, 64 usage, 65 invalid
    ///   input, 66 incompatible store, 74 I/O, 128 + signal when cancelled).
    public static func run(arguments: [String]) -> Int32 {
        run(arguments: arguments, host: CommandLineHost())
    }

    /// Runs one command for a host that starts fleet children its own way or loads policies of
    /// its own (the C API's `cdm_command_line_run`).
    /// - Parameters:
    ///   - arguments: as `run(arguments:)`.
    ///   - host: the child command and the policy loader.
    /// - Returns: as `run(arguments:)`.
    package static func run(arguments: [String], host: CommandLineHost) -> Int32 {
        CommandLineHost.$current.withValue(host) { run(hostedArguments: arguments) }
    }

    private static func run(hostedArguments arguments: [String]) -> Int32 {
        Interrupt.begin()
        defer { Interrupt.end() }
        let status: Int32
        do {
            var command = try CDMigrateCommand.parseAsRoot(arguments)
            try command.run()
            status = 0
        } catch {
            // As ArgumentParser's `exit(withError:)`: help and clean exits on standard output,
            // errors on standard error.
            let code = CDMigrateCommand.exitCode(for: error)
            let text = CDMigrateCommand.fullMessage(for: error)
            if !text.isEmpty {
                if code == .success {
                    print(text)
                } else {
                    fflush(stdout)
                    fputs(text + "\n", stderr)
                }
            }
            status = code.rawValue
        }
        fflush(stdout)
        fflush(stderr)
        return status
    }
}
