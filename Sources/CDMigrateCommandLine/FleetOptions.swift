import ArgumentParser

/// The options of `cdmigrate migrate` that run many stores at once (see FleetRun).
struct FleetOptions: ParsableArguments {
    @Option(
        name: .customLong("jobs"),
        help: ArgumentHelp(
            "Migrate this many stores at a time, each in a process of its own (default: the number of cores).",
            valueName: "n"))
    var jobs: Int?

    @Option(
        name: .customLong("out-dir"),
        help: ArgumentHelp(
            "Write each migrated store into this folder, under the store's file name.", valueName: "dir"),
        completion: .directory)
    var outDirectory: String?

    @Option(
        name: .customLong("from-file"),
        help: ArgumentHelp(
            "Also migrate the stores listed in this file, one path a line (as @file does).", valueName: "file"),
        completion: .file())
    var listFiles: [String] = []

    @OptionGroup var junitOutput: JUnitOption

    /// Whether any of the options was given.
    var isGiven: Bool { jobs != nil || outDirectory != nil || !listFiles.isEmpty || junitOutput.file != nil }
}
