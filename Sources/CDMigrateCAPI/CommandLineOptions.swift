/// `cdm_command_line_options.load_policies` of cdmigrate.h: (user, name, migration, message out)
/// -> result code.
public typealias CommandLinePolicyLoader =
    @convention(c) (
        UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?,
        UnsafeMutablePointer<UnsafePointer<CChar>?>?
    ) -> Int32

/// `cdm_command_line_options` of cdmigrate.h, field for field: what a host gives
/// `cdm_command_line_run` (the command line lives in CDMigrateCommandLine, which reads this).
public struct CommandLineOptions {
    public var childCommand: UnsafePointer<UnsafePointer<CChar>?>?
    public var childCommandCount: Int
    public var loadPolicies: CommandLinePolicyLoader?
    public var user: UnsafeMutableRawPointer?
}
