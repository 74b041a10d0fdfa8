import CDMigrateCommandLine

#if canImport(Glibc)
    import Glibc
#endif

// The `cdmigrate` executable: the command line lives in CDMigrateCommandLine (also reachable
// through the C API's cdm_command_line_run).
exit(CommandLineRun.run(arguments: Array(CommandLine.arguments.dropFirst())))
