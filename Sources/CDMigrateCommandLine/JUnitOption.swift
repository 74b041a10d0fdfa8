import ArgumentParser

/// `--junit FILE`: the results as JUnit XML, for the commands that check or migrate many stores
/// (`check`, and `migrate` with several stores).
struct JUnitOption: ParsableArguments {
    @Option(
        name: .customLong("junit"),
        help: ArgumentHelp(
            "Also write the results as JUnit XML to this file (one test case per store; for CI systems).",
            valueName: "file"),
        completion: .file())
    var file: String?
}
