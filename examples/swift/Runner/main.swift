import CDMigrate
import ReferenceMigrations
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// cdmigrate-examples: generates each reference migration's source store in a fresh directory,
/// runs the migration and prints what it did. Exits with 1 when any scenario fails, 2 on bad usage.
///
///     cdmigrate-examples [--scenario N]... [--keep DIR]
///     cdmigrate-examples --scenario N --source PATH --destination PATH
///
/// The second form migrates an existing source store (no generator) with the scenario's Swift
/// policies; on failure it prints "error CODE: message" to stderr and exits with 1.

func usage() -> Never {
    fputs("""
    usage: cdmigrate-examples [--scenario N]... [--keep DIR]
      --scenario N   run only scenario N (1-\(ReferenceMigrations.scenarios.count)); repeatable
      --keep DIR     keep the generated and migrated stores in DIR/scenario-N (each must not exist yet)
      --source PATH --destination PATH
                     migrate the store at PATH of the one scenario given (4: any version to v4;
                     5: also with no code into DESTINATION.no-code)
      --help         this text

    """, stderr)
    exit(2)
}

var selected: [Int] = []
var keepDirectory: String?
var sourcePath: String?
var destinationPath: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--scenario", "-s":
        guard let text = arguments.popFirst(), let n = Int(text), ReferenceMigrations.scenarios.contains(where: { $0.number == n }) else {
            fputs("cdmigrate-examples: --scenario needs a number from 1 to \(ReferenceMigrations.scenarios.count)\n", stderr)
            usage()
        }
        selected.append(n)
    case "--keep", "-k":
        guard let directory = arguments.popFirst() else { usage() }
        keepDirectory = directory
    case "--source":
        guard let path = arguments.popFirst() else { usage() }
        sourcePath = path
    case "--destination":
        guard let path = arguments.popFirst() else { usage() }
        destinationPath = path
    case "--help", "-h":
        usage()
    default:
        fputs("cdmigrate-examples: unknown argument '\(argument)'\n", stderr)
        usage()
    }
}
if sourcePath != nil || destinationPath != nil {
    guard let source = sourcePath, let destination = destinationPath, selected.count == 1, keepDirectory == nil else {
        fputs("cdmigrate-examples: --source and --destination go together, with one --scenario and no --keep\n", stderr)
        usage()
    }
    do {
        try ReferenceMigrations.migrate(scenario: selected[0], source: source, destination: destination)
        exit(0)
    } catch let error as MigrationError {
        fputs("error \(error.code.rawValue): \(error.message)\n", stderr)
        exit(1)
    } catch {
        fputs("error: \(error)\n", stderr)
        exit(1)
    }
}
if selected.isEmpty { selected = ReferenceMigrations.scenarios.map { $0.number } }

var failures = 0
for number in selected {
    let directory: String
    do {
        if let keep = keepDirectory {
            directory = keep + "/scenario-\(number)"
            if FileIO.exists(directory) {
                throw MigrationError(.invalidArgument, "'\(directory)' already exists; give --keep a directory that has no scenario-\(number) in it")
            }
            try TemporaryDirectory.create(directory)
        } else {
            directory = try TemporaryDirectory.make(prefix: "cdmigrate-scenario-\(number)")
        }
    } catch {
        fputs("scenario \(number): \(error)\n", stderr)
        failures += 1
        continue
    }
    defer { if keepDirectory == nil { TemporaryDirectory.remove(directory) } }
    do {
        let result = try ReferenceMigrations.run(scenario: number, in: directory)
        for line in result.lines { print(line) }
        print("")
    } catch {
        print("== Scenario \(number): FAILED")
        fputs("scenario \(number) failed: \(error)\n", stderr)
        failures += 1
    }
}
if failures > 0 {
    fputs("\(failures) scenario(s) failed\n", stderr)
    exit(1)
}
