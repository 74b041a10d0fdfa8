import CDMigrate
import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

// Prints speed and memory figures for a declarative migration at two store sizes, and the time
// raw SQLite takes for the same rows, so ratios can be compared within one run (no timed asserts).
// Usage: cdmigrate-benchmark [small] [large]   (default 20000 200000 notes)

let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let small = sizes.first ?? 20_000
let large = sizes.dropFirst().first ?? 200_000

let sourceModel = try ManagedObjectModel(
    json: """
        {"name": "Bench", "versionIdentifier": "1", "entities": [
          {"name": "Folder", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]},
          {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "body", "type": "string"},
                                          {"name": "created", "type": "date"}, {"name": "rank", "type": "integer32"}],
           "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes"}]}
        ]}
        """)
let destinationModel = try ManagedObjectModel(
    json: """
        {"name": "Bench", "versionIdentifier": "2", "entities": [
          {"name": "Folder", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]},
          {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "text", "type": "string"},
                                          {"name": "created", "type": "date"}, {"name": "score", "type": "integer64"}],
           "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes"}]}
        ]}
        """)
let mapping = try MappingModel(
    json:
        """
        {"entityMappings": [
          {"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"title": "$source.name"}},
          {"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"title": "$source.title", "text": "$source.body", "created": "$source.created", "score": "$source.rank * 10"},
           "relationshipMappings": {"folder": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"FolderToFolder\\", $source.folder)"}}
        ]}
        """)

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// Peak resident set size of this process so far, in MiB (VmHWM).
func peakRSS() -> Double {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, 256, file) != nil {
        let text = String(cString: line)
        if text.hasPrefix("VmHWM:") {
            let digits = text.filter { $0.isNumber }
            return (Double(digits) ?? 0) / 1024
        }
    }
    return 0
}

func generate(_ path: String, notes: Int) throws {
    let store = try PersistentStore.create(at: path, model: sourceModel)
    var folders: [ManagedObject] = []
    for i in 0..<100 {
        let folder = try store.insertObject(entityName: "Folder")
        try folder.setValue(.string("Folder \(i)"), forKey: "name")
        folders.append(folder)
    }
    for i in 0..<notes {
        let note = try store.insertObject(entityName: "Note")
        try note.setValue(.string("Note \(i)"), forKey: "title")
        try note.setValue(.string("Body of note \(i) with some text to carry"), forKey: "body")
        try note.setValue(.date(Double(i) * 60), forKey: "created")
        try note.setValue(.integer(Int64(i % 1000)), forKey: "rank")
        try note.setValue(.object(folders[i % 100]), forKey: "folder")
        if i % 10_000 == 9_999 { try store.save() }
    }
    try store.save()
    store.close()
}

/// The same transformation as hand-written SQL over ATTACHed databases: the floor to compare with.
func rawSQLite(_ source: String, _ destination: String) throws -> Double {
    var db: OpaquePointer?
    guard sqlite3_open(destination, &db) == SQLITE_OK else { throw MigrationError(.io, "cannot open \(destination)") }
    defer { sqlite3_close(db) }
    let sql = """
        PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
        CREATE TABLE ZFOLDER (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR);
        CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFOLDER INTEGER, ZCREATED TIMESTAMP, ZSCORE INTEGER, ZTEXT VARCHAR, ZTITLE VARCHAR);
        CREATE INDEX ZNOTE_ZFOLDER_INDEX ON ZNOTE (ZFOLDER);
        ATTACH '\(source)' AS src;
        BEGIN;
        INSERT INTO ZFOLDER SELECT Z_PK, 1, 1, ZNAME FROM src.ZFOLDER;
        INSERT INTO ZNOTE SELECT Z_PK, 2, 1, ZFOLDER, ZCREATED, ZRANK * 10, ZBODY, ZTITLE FROM src.ZNOTE;
        COMMIT;
        """
    let start = now()
    guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
        throw MigrationError(.sqlite, String(cString: sqlite3_errmsg(db)))
    }
    return now() - start
}

var template = Array("/tmp/cdmigrate-bench-XXXXXX".utf8CString)
let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
print(
    "cdmigrate benchmark: declarative migration of Note (4 attributes, one to-one) and Folder; \(small) and \(large) notes"
)
var results: [(notes: Int, seconds: Double, raw: Double, peak: Double)] = []
for notes in [small, large] {
    let source = "\(directory)/source-\(notes).sqlite"
    try generate(source, notes: notes)
    let before = peakRSS()
    let manager = try MigrationManager(
        sourceModel: sourceModel, destinationModel: destinationModel, mappingModel: mapping)
    let start = now()
    try manager.migrateStore(from: source, to: "\(directory)/destination-\(notes).sqlite")
    let seconds = now() - start
    let peak = peakRSS()
    let raw = try rawSQLite(source, "\(directory)/raw-\(notes).sqlite")
    results.append((notes, seconds, raw, peak))
    print(
        "  \(notes) notes: \(Value.format((seconds * 1000).rounded())) ms, \(Value.format((Double(notes) / seconds).rounded())) notes/s, "
            + "\(Value.format((seconds / Double(notes) * 1e6 * 10).rounded() / 10)) µs/note; raw SQLite \(Value.format((raw * 1000).rounded())) ms "
            + "(cdmigrate/raw = \(Value.format((seconds / raw * 10).rounded() / 10))x); peak RSS \(Value.format(peak.rounded())) MiB (before: \(Value.format(before.rounded())) MiB)"
    )
}
do {
    // The same mapping with the SQL push-down turned off: every row through Swift objects.
    let manager = try MigrationManager(
        sourceModel: sourceModel, destinationModel: destinationModel, mappingModel: mapping)
    manager.pushDownSQL = false
    let start = now()
    try manager.migrateStore(from: "\(directory)/source-\(large).sqlite", to: "\(directory)/rowwise-\(large).sqlite")
    let seconds = now() - start
    print(
        "  \(large) notes row by row (pushDownSQL off): \(Value.format((seconds * 1000).rounded())) ms, "
            + "\(Value.format((seconds / Double(large) * 1e6 * 10).rounded() / 10)) µs/note; push-down speed-up \(Value.format(((seconds / (results.last?.seconds ?? seconds)) * 10).rounded() / 10))x"
    )
    unlink("\(directory)/rowwise-\(large).sqlite")
}
if results.count == 2 {
    let a = results[0]
    let b = results[1]
    print(
        "  size ratio \(Value.format(Double(b.notes) / Double(a.notes)))x → time ratio \(Value.format((b.seconds / a.seconds * 10).rounded() / 10))x, "
            + "peak RSS ratio \(Value.format((b.peak / max(a.peak, 1) * 100).rounded() / 100))x (flat memory means ≈ 1)"
    )
}

// A custom policy that finds a shared destination instance by value for every source row (the
// "one Author per name" pattern): the lookup must not scan the destination each time, so the
// time per row stays flat as the destination grows.
let authorsModel = try ManagedObjectModel(
    json: """
        {"name": "Bench", "versionIdentifier": "3", "entities": [
          {"name": "Folder", "attributes": [{"name": "title", "type": "string"}]},
          {"name": "Note", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "tag", "destination": "Tag", "inverse": "notes"}]},
          {"name": "Tag", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "tag", "toMany": true}]}
        ]}
        """)
final class TagPerTitlePolicy: EntityMigrationPolicy {
    override func createDestinationInstances(
        forSource note: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        guard let created = try defaultCreateDestinationInstances(forSource: note, in: mapping, manager: manager) else {
            return
        }
        // Every other note shares a tag with its neighbour: half the lookups find one, half make one.
        let title = try note.value(forKey: "title").stringValue ?? ""
        let number = Int(title.split(separator: " ").last ?? "") ?? 0
        let name = Value.string("tag \(number / 2)")
        let tag =
            try manager.fetchDestinationInstances(
                entityName: "Tag", predicate: "name == %@", arguments: [name], fetchLimit: 1
            ).first
            ?? {
                let tag = try manager.createDestinationInstance(entityName: "Tag")
                try tag.setValue(name, forKey: "name")
                return tag
            }()
        try created.setValue(.object(tag), forKey: "tag")
    }
}
let lookupMapping = try MappingModel(
    json:
        """
        {"entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
          "policy": "TagPerTitle", "attributeMappings": {"title": "$source.title"}}]}
        """)
var lookupTimes: [Double] = []
for notes in [small, large] {
    let manager = try MigrationManager(
        sourceModel: sourceModel, destinationModel: authorsModel, mappingModel: lookupMapping)
    manager.registerPolicy(named: "TagPerTitle") { TagPerTitlePolicy() }
    let start = now()
    try manager.migrateStore(from: "\(directory)/source-\(notes).sqlite", to: "\(directory)/lookup-\(notes).sqlite")
    let perRow = (now() - start) / Double(notes) * 1e6
    lookupTimes.append(perRow)
    print(
        "  destination lookup per row (policy fetching a Tag by name), \(notes) notes: \(Value.format((perRow * 10).rounded() / 10)) µs/note"
    )
    unlink("\(directory)/lookup-\(notes).sqlite")
}
if lookupTimes.count == 2 {
    print(
        "  lookup time per row, large/small: \(Value.format((lookupTimes[1] / lookupTimes[0] * 100).rounded() / 100))x (no scan per lookup means ≈ 1)"
    )
}
for suffix in ["source", "destination", "raw"] {
    for notes in [small, large] { unlink("\(directory)/\(suffix)-\(notes).sqlite") }
}
rmdir(directory)
