import CDMigrate
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Kills migrations at random moments and checks, after each kill, the promises of
// docs/reliability.md: the source's files are byte-identical (main, -wal, -shm) and nothing is
// new beside it; no partial store is ever under the final name (it is absent or whole); a rerun
// succeeds and removes what the killed run left. Half the runs migrate to a new file, half in
// place; half are killed with SIGKILL, half sent SIGTERM (which the child handles as a host
// should: it cancels the migration, which must then leave nothing at all); some are killed
// inside the final hand-over (before the move, between `link` and `unlink`, after the move);
// some reach the source and the destination through symbolic links.
//
// Usage: cdmigrate-crash-harness [--runs N] [--items K] [--seed S] [--keep DIR]
//        (scripts/crash-harness.sh: short mode 20 runs, full mode 200 runs)
// Internal: cdmigrate-crash-harness --child new|inplace|inplace-pushdown SOURCE [DESTINATION]
//           [--window beforeMove|betweenLinkAndUnlink|afterMove] [--link]

let v1 = """
    {"name": "Items", "versionIdentifier": "1", "entities": [
      {"name": "Item", "attributes": [{"name": "name", "type": "string"}, {"name": "rank", "type": "integer32"}]}]}
    """
let v2 = """
    {"name": "Items", "versionIdentifier": "2", "entities": [
      {"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "rank", "type": "integer64"}]}]}
    """
let mappingText = """
    {"entityMappings": [{"name": "ItemToItem", "sourceEntity": "Item", "destinationEntity": "Item", "predicate": "TRUEPREDICATE",
      "attributeMappings": {"title": "$source.name", "rank": "$source.rank * 2"}}]}
    """

func makeManager(pushDown: Bool) throws -> MigrationManager {
    let manager = try MigrationManager(
        sourceModel: try ManagedObjectModel(json: v1), destinationModel: try ManagedObjectModel(json: v2),
        mappingModel: try MappingModel(json: mappingText))
    manager.pushDownSQL = pushDown
    manager.batchSize = 500
    return manager
}

let arguments = Array(CommandLine.arguments.dropFirst())

// MARK: Child: one migration, killed or not.

/// Set by the child's SIGTERM handler; its progress handler then cancels the migration.
nonisolated(unsafe) var terminationRequested: sig_atomic_t = 0

if arguments.first == "--child" {
    let mode = arguments.count > 1 ? arguments[1] : ""
    // A library host's way to stop on SIGTERM: cancel from the progress handler (exit 3).
    signal(SIGTERM) { _ in terminationRequested = 1 }
    if let i = arguments.firstIndex(of: "--window"), i + 1 < arguments.count {
        let wanted = arguments[i + 1]
        StoreFiles.handOverWindow = { moment in
            guard "\(moment)" == wanted else { return }
            // Tell the parent, then linger so that its kill lands in this window.
            print("window \(moment)")
            fflush(stdout)
            usleep(200_000)
        }
    }
    StoreFiles.handOverByLink = arguments.contains("--link")
    do {
        let pushDown = mode == "inplace-pushdown"
        let manager = try makeManager(pushDown: pushDown)
        manager.progressHandler = { _ in terminationRequested == 0 }
        if mode == "new", arguments.count > 3 {
            try manager.migrateStore(from: arguments[2], to: arguments[3])
        } else if mode.hasPrefix("inplace"), arguments.count > 2 {
            try manager.migrateStoreInPlace(at: arguments[2])
        } else {
            print("bad child arguments")
            exit(2)
        }
        exit(0)
    } catch let error as MigrationError where error.code == .migrationCancelled {
        exit(3)
    } catch {
        print("child: \(error)")
        exit(1)
    }
}

// MARK: Parent

func value(_ flag: String) -> String? {
    guard let i = arguments.firstIndex(of: flag), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}
let runs = Int(value("--runs") ?? "") ?? 20
let items = Int(value("--items") ?? "") ?? 5_000
var rng = SystemRandomNumberGenerator()
let seed = UInt64(value("--seed") ?? "") ?? UInt64.random(in: 1...UInt64(UInt32.max), using: &rng)
srand48(Int(seed))

let fm = FileManager.default
let root: String =
    value("--keep")
    ?? {
        var template = Array("/tmp/cdmigrate-crash-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }()
try? fm.createDirectory(atPath: root, withIntermediateDirectories: true)
let me = (try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]

func listing(_ folder: String) -> [String: Data] {
    var files: [String: Data] = [:]
    for name in (try? fm.contentsOfDirectory(atPath: folder)) ?? [] {
        files[name] = (try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))) ?? Data()
    }
    return files
}

func reset(_ folder: String) {
    try? fm.removeItem(atPath: folder)
    try? fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
}

func copyFolder(_ from: String, _ to: String) {
    reset(to)
    for (name, data) in listing(from) { _ = fm.createFile(atPath: to + "/" + name, contents: data) }
}

/// How many v2 items the store at `path` holds; nil when it is not a whole v2 store.
func migratedCount(_ path: String) -> Int? {
    guard let store = try? PersistentStore.open(at: path, model: try ManagedObjectModel(json: v2)) else {
        return nil
    }
    defer { store.close() }
    return try? store.count(FetchRequest(entityName: "Item"))
}

// Pristine sources: Core Data's shape (WAL, log folded in) and one with committed transactions
// still in its -wal (a writer killed before its checkpoint), with a stale -shm.
let pristine = root + "/pristine"
let pristineLogged = root + "/pristine-logged"
reset(pristine)
reset(pristineLogged)
do {
    let store = try PersistentStore.create(at: pristine + "/a.sqlite", model: try ManagedObjectModel(json: v1))
    for i in 0..<items {
        let item = try store.insertObject(entityName: "Item")
        try item.setValue(.string("item \(i)"), forKey: "name")
        try item.setValue(.integer(Int64(i)), forKey: "rank")
    }
    try store.save()
    store.close()
}
copyFolder(pristine, pristineLogged)
if let store = try? PersistentStore.open(
    at: pristineLogged + "/a.sqlite", model: try ManagedObjectModel(json: v1), readOnly: false)
{
    // Writing through cdmigrate with the WAL left behind: copy main and -wal while it is open.
    let item = try store.insertObject(entityName: "Item")
    try item.setValue(.string("logged"), forKey: "name")
    try store.save()
    let main = try Data(contentsOf: URL(fileURLWithPath: pristineLogged + "/a.sqlite"))
    let wal = try Data(contentsOf: URL(fileURLWithPath: pristineLogged + "/a.sqlite-wal"))
    let shm = try Data(contentsOf: URL(fileURLWithPath: pristineLogged + "/a.sqlite-shm"))
    store.close()
    reset(pristineLogged)
    _ = fm.createFile(atPath: pristineLogged + "/a.sqlite", contents: main)
    _ = fm.createFile(atPath: pristineLogged + "/a.sqlite-wal", contents: wal)
    _ = fm.createFile(atPath: pristineLogged + "/a.sqlite-shm", contents: shm)
}
let loggedItems =
    items + (((try? Data(contentsOf: URL(fileURLWithPath: pristineLogged + "/a.sqlite-wal")).count) ?? 0) > 0 ? 1 : 0)

func spawn(_ args: [String], output: Pipe? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: me)
    process.arguments = ["--child"] + args
    process.standardOutput = output ?? FileHandle.nullDevice
    try process.run()
    return process
}

/// Waits until the child says it is inside its hand-over window (false when it ended first).
func awaitWindow(_ pipe: Pipe) -> Bool {
    var text = ""
    while true {
        let data = pipe.fileHandleForReading.availableData
        if data.isEmpty { return false }
        text += String(decoding: data, as: UTF8.self)
        if text.contains("window") { return true }
    }
}

/// The names beside a store that belong to cdmigrate runs.
func runFiles(_ folder: String, _ store: String) -> [String] {
    ((try? fm.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(store + ".cdmigrate-") }.sorted()
}

func duration(_ args: [String]) throws -> Double {
    let start = Date()
    let process = try spawn(args)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw MigrationError(.migration, "an unkilled child failed: \(args)") }
    return Date().timeIntervalSince(start)
}

// How long an unkilled run takes, so kills fall across the whole run.
// The shortest of three unkilled runs each (the first ones pay for cold caches).
var newDuration = Double.infinity
var inPlaceDuration = Double.infinity
for _ in 0..<3 {
    copyFolder(pristine, root + "/time-src")
    reset(root + "/time-dst")
    newDuration = min(newDuration, try duration(["new", root + "/time-src/a.sqlite", root + "/time-dst/b.sqlite"]))
    copyFolder(pristine, root + "/time-src")
    inPlaceDuration = min(inPlaceDuration, try duration(["inplace", root + "/time-src/a.sqlite"]))
}
print("crash harness: \(runs) runs, \(items) items, seed \(seed), in \(root)")
print(
    String(format: "unkilled run: to a new file %.0f ms, in place %.0f ms", newDuration * 1000, inPlaceDuration * 1000))

var failures: [String] = []
var killedBeforeEnd = 0
var finishedBeforeKill = 0
var leftovers = 0
var cancelledByTerm = 0
var windowKills = 0
var linkedRuns = 0
var killsBySignal: [String: Int] = [:]
let moments = ["beforeMove", "betweenLinkAndUnlink", "afterMove"]
for run in 0..<runs {
    let inPlace = run % 2 == 1
    let logged = !inPlace && run % 4 == 0
    let term = (run / 2) % 2 == 1
    // Every fifth and sixth run is killed inside the hand-over; new files alternate between
    // renameat2 and link + unlink.
    let window: String? =
        (run % 5 == 3 || run % 5 == 4)
        ? (inPlace ? ["beforeMove", "afterMove"][(run / 5) % 2] : moments[(run / 5) % 3]) : nil
    let byLink = !inPlace && (window == "betweenLinkAndUnlink" || (window == nil && run % 8 == 2))
    let sourceLinked = run % 3 == 0
    let destinationLinked = !inPlace && run % 3 == 1
    if sourceLinked || destinationLinked { linkedRuns += 1 }
    let origin = logged ? pristineLogged : pristine
    let expected = logged ? loggedItems : items
    let folder = root + "/run"
    let source = folder + "/src"
    let destination = folder + "/dst"
    reset(folder)
    copyFolder(origin, source)
    reset(destination)
    // Through links: <run>/link.sqlite -> src/a.sqlite, <run>/dstlink -> dst.
    let sourcePath = sourceLinked ? folder + "/link.sqlite" : source + "/a.sqlite"
    if sourceLinked { try fm.createSymbolicLink(atPath: sourcePath, withDestinationPath: "src/a.sqlite") }
    if destinationLinked { try fm.createSymbolicLink(atPath: folder + "/dstlink", withDestinationPath: "dst") }
    let final = (destinationLinked ? folder + "/dstlink" : destination) + "/b.sqlite"
    let before = listing(source)
    var args = inPlace ? [run % 3 == 0 ? "inplace-pushdown" : "inplace", sourcePath] : ["new", sourcePath, final]
    if let window = window { args += ["--window", window] }
    if byLink { args.append("--link") }
    let pipe = Pipe()
    let process = try spawn(args, output: pipe)
    var delay = 0.0
    if window != nil {
        if awaitWindow(pipe) { windowKills += 1 }
        delay = drand48() * 0.15
    } else {
        delay = drand48() * 1.1 * (inPlace ? inPlaceDuration : newDuration)
    }
    usleep(useconds_t(delay * 1_000_000))
    if process.isRunning {
        kill(process.processIdentifier, term ? SIGTERM : SIGKILL)
    }
    // Drain what the child prints, so that it never blocks on a full pipe.
    _ = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let killed = process.terminationReason == .uncaughtSignal
    let cancelled = process.terminationReason == .exit && process.terminationStatus == 3
    if killed || cancelled { killedBeforeEnd += 1 } else { finishedBeforeKill += 1 }
    if killed { killsBySignal[term ? "SIGTERM before its handler" : "SIGKILL", default: 0] += 1 }
    if cancelled { cancelledByTerm += 1 }
    if !killed && !cancelled && process.terminationStatus != 0 {
        failures.append("run \(run): the child failed without a kill (\(process.terminationStatus))")
    }
    let how =
        "\(term ? "SIGTERM" : "SIGKILL")\(window.map { " in the hand-over (\($0)\(byLink ? ", link + unlink" : ""))" } ?? "")"
        + (sourceLinked ? ", source through a link" : "") + (destinationLinked ? ", destination through a link" : "")
    let label =
        "run \(run) (\(inPlace ? "in place" : "new file")\(logged ? ", source with log" : ""), \(how), \(killed ? "killed" : cancelled ? "cancelled" : "finished") at \(Int(delay * 1000)) ms)"
    // A handled SIGTERM (cancelled or finished) leaves nothing but the result.
    let mustBeClean = !killed

    if !inPlace {
        // 1. The source folder is exactly as it was.
        if listing(source) != before {
            failures.append("\(label): the source folder changed: \(listing(source).keys.sorted())")
        }
        // 2. The final name holds nothing or a whole store.
        let whole = FileIO.exists(final)
        if whole {
            if migratedCount(final) != expected { failures.append("\(label): '\(final)' is not a whole store") }
            try? fm.removeItem(atPath: destination + "/b.sqlite")
        }
        let left = listing(destination).keys.filter { $0 != "b.sqlite" }
        if left.contains(where: { !$0.hasPrefix("b.sqlite.cdmigrate-") }) {
            failures.append("\(label): unexpected files beside the destination: \(left.sorted())")
        }
        if mustBeClean && !left.isEmpty { failures.append("\(label): a handled SIGTERM left files: \(left.sorted())") }
        leftovers += left.count
        // 3. A rerun succeeds (over any leftovers of the killed run) and removes them.
        do {
            try makeManager(pushDown: true).migrateStore(from: sourcePath, to: final)
            if migratedCount(final) != expected { failures.append("\(label): the rerun's store is not whole") }
        } catch { failures.append("\(label): the rerun failed: \(error)") }
        if listing(source) != before { failures.append("\(label): the rerun changed the source folder") }
        let after = runFiles(destination, "b.sqlite")
        if !after.isEmpty { failures.append("\(label): the rerun left the killed run's files: \(after)") }
    } else {
        // 1. The store is either the old one, byte for byte, or the whole new one.
        let now = listing(source)
        let path = source + "/a.sqlite"
        let old = now.filter { !$0.key.contains(".cdmigrate-") }
        let isOld = old == before
        let isNew = !isOld && migratedCount(path) == expected && old.keys.sorted() == ["a.sqlite"]
        if !isOld && !isNew {
            failures.append(
                "\(label): the store is neither the old one byte for byte nor the whole new one: \(old.keys.sorted())")
        }
        if sourceLinked && (try? fm.destinationOfSymbolicLink(atPath: sourcePath)) != "src/a.sqlite" {
            failures.append("\(label): the link to the store is gone")
        }
        let left = now.keys.filter { $0.contains(".cdmigrate-") }
        if left.contains(where: { !$0.hasPrefix("a.sqlite.cdmigrate-") }) {
            failures.append("\(label): unexpected files: \(left.sorted())")
        }
        if mustBeClean && !left.isEmpty { failures.append("\(label): a handled SIGTERM left files: \(left.sorted())") }
        leftovers += left.count
        // 2. A rerun succeeds when the old store is still there; else `cdmigrate clean`'s
        //    removal runs. Either way the killed run's files go.
        if isOld {
            do {
                try makeManager(pushDown: true).migrateStoreInPlace(at: sourcePath)
                if migratedCount(path) != expected { failures.append("\(label): the rerun's store is not whole") }
            } catch { failures.append("\(label): the rerun failed: \(error)") }
        } else if FileIO.exists(path + ".cdmigrate-lock") {
            do { _ = try DestinationLock.leftovers(of: path, remove: true) } catch {
                failures.append("\(label): clean failed: \(error)")
            }
        }
        let after = runFiles(source, "a.sqlite")
        if !after.isEmpty { failures.append("\(label): the killed run's files stayed: \(after)") }
    }
}

// Two processes migrating to one destination at once: one wins, the other fails as busy (or,
// when it starts after the winner finished, because the destination exists); the store is whole.
var busyRefusals = 0
let races = max(5, runs / 10)
for race in 0..<races {
    let source = root + "/race/src"
    let destination = root + "/race/dst"
    copyFolder(pristine, source)
    reset(destination)
    let final = destination + "/b.sqlite"
    var outputs: [Pipe] = []
    var children: [Process] = []
    for _ in 0..<2 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: me)
        process.arguments = ["--child", "new", source + "/a.sqlite", final]
        let pipe = Pipe()
        process.standardOutput = pipe
        outputs.append(pipe)
        children.append(process)
    }
    for child in children { try child.run() }
    for child in children { child.waitUntilExit() }
    let texts = outputs.map { String(decoding: $0.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
    let winners = children.filter { $0.terminationStatus == 0 }.count
    let label = "race \(race)"
    if winners != 1 { failures.append("\(label): \(winners) migrations succeeded: \(texts)") }
    for (child, text) in zip(children, texts) where child.terminationStatus != 0 {
        if text.contains("is busy") {
            busyRefusals += 1
        } else if !text.contains("already exists") {
            failures.append("\(label): unexpected failure: \(text)")
        }
    }
    if migratedCount(final) != items { failures.append("\(label): the destination is not whole") }
    if Array(listing(destination).keys) != ["b.sqlite"] {
        failures.append("\(label): files left: \(listing(destination).keys.sorted())")
    }
    if listing(source) != listing(pristine) { failures.append("\(label): the source folder changed") }
}
print(
    "two processes to one destination: \(races) races, one winner each; the other refused as busy \(busyRefusals) times, as existing \(races - busyRefusals) times"
)

print(
    "runs: \(runs); stopped during the run: \(killedBeforeEnd) (\(killsBySignal.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")), cancelled on SIGTERM \(cancelledByTerm)); finished before the signal: \(finishedBeforeKill)"
)
print("killed inside the hand-over window: \(windowKills); through symbolic links: \(linkedRuns)")
print(
    "temporary or lock files left by killed runs (all named <destination>.cdmigrate-*): \(leftovers); all removed by the next run or clean"
)
if failures.isEmpty {
    print("all checks passed")
    if value("--keep") == nil { try? fm.removeItem(atPath: root) }
    exit(0)
}
for failure in failures { print("FAIL: " + failure) }
exit(1)
