import ArgumentParser

/// `cdmigrate`: Core Data heavyweight migrations of SQLite stores from the command line.
@main
struct CDMigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cdmigrate",
        abstract: "Migrate Core Data SQLite stores from one model version to the next, on Linux.",
        discussion: """
        Models are cdmigrate's JSON models (docs/model-format.md); mapping models are JSON \
        (docs/mapping-format.md). Several --mapping options run as passes, in the order given.

        \(ExitStatus.table)
        """,
        subcommands: [MigrateCommand.self, ValidateCommand.self, InspectCommand.self]
    )
}
