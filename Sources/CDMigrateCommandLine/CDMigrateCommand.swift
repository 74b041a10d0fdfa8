import ArgumentParser
import CDMigrateCAPI

/// `cdmigrate`: Core Data heavyweight migrations of SQLite stores from the command line.
struct CDMigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cdmigrate",
        abstract: "Migrate Core Data SQLite stores from one model version to the next, on Linux.",
        discussion: """
            Models are cdmigrate's JSON models (docs/model-format.md); mapping models are JSON \
            (docs/mapping-format.md); Xcode's .xcdatamodel, .xcdatamodeld, .mom and .momd are read \
            as models too, and `import` converts them (and .xcmappingmodel) to JSON. Several --mapping \
            options run as passes, in the order given. With --models (an .xcdatamodeld, a folder of \
            JSON models or a .momd, with its mapping models) a store is migrated version by version: \
            see cdmigrate plan and cdmigrate check. `cdmigrate help <command>` explains each command.

            `cdmigrate --version` prints the version (the library's, cdm_libversion()).

            Shell completion (subcommands, options, file and folder names):
              cdmigrate --generate-completion-script bash > cdmigrate.bash   # source it
              cdmigrate --generate-completion-script zsh > ~/.zfunc/_cdmigrate
              cdmigrate --generate-completion-script fish \\
                  > ~/.config/fish/completions/cdmigrate.fish

            \(ExitStatus.table)
            """,
        version: String(cString: cdm_libversion()),
        subcommands: [
            MigrateCommand.self, PlanCommand.self, CheckCommand.self, ValidateCommand.self, InspectCommand.self,
            InferCommand.self, ImportCommand.self, CleanCommand.self, CreateStoreCommand.self,
        ]
    )
}
