import ArgumentParser

/// `--mappings DIR`: folders of mapping models kept apart from a model set (or bundle), searched
/// with their subfolders; the same option for every command that reads a model set.
struct MappingFolderOptions: ParsableArguments {
    @Option(
        name: .customLong("mappings"),
        help: ArgumentHelp(
            "A folder of mapping models kept apart from the model set, searched with its subfolders (repeatable).",
            valueName: "dir"), completion: .directory)
    var folders: [String] = []
}
