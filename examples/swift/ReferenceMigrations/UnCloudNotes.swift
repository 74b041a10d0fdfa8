import CDMigrate

/// Scenario 4: UnCloudNotes (the course's models v1–v4) — v3 → v4 with a custom policy and a
/// child entity, and any store from v1 to v3 brought to v4 one version at a time.
public enum UnCloudNotes {
    public static let directory = "4-uncloudnotes"
    public static let versions = [1, 2, 3, 4]

    public static func model(version: Int) throws -> ManagedObjectModel {
        try ReferenceMigrations.model(directory, "UnCloudNotes_v\(version).model.json")
    }

    /// The mapping from `version` to `version + 1`.
    public static func mapping(from version: Int) throws -> MappingModel {
        try ReferenceMigrations.mapping(directory, "UnCloudNotes_v\(version)_to_v\(version + 1).mapping.json")
    }

    /// A manager for one step, `version` → `version + 1`.
    public static func manager(from version: Int) throws -> MigrationManager {
        let manager = try MigrationManager(sourceModel: try model(version: version), destinationModel: try model(version: version + 1),
                                           mappingModels: [try mapping(from: version)])
        manager.registerPolicy(named: AttachmentToImageAttachmentMigrationPolicyV3toV4.name) { AttachmentToImageAttachmentMigrationPolicyV3toV4() }
        return manager
    }

    /// Bodies of every length around the 80-character caption: empty, short, exactly 80, long,
    /// with accents and emoji.
    static func body(_ i: Int, _ random: inout SeededGenerator) -> String {
        let words = ["remember", "the", "milk", "café", "naïve", "meeting", "at", "noon", "🎉", "photo", "of", "the", "whiteboard", "👩‍💻", "draft", "ideas"]
        switch i % 7 {
        case 0: return ""
        case 1: return "Short note \(i)"
        case 2: return String(repeating: "x", count: 79 - String(i).count) + "#\(i)"
        case 3: return String(repeating: "y", count: 80 - String(i).count - 1) + "#\(i)" + "!"
        default:
            var text = "Note \(i + 1):"
            for _ in 0..<random.int(3...60) { text += " " + random.pick(words) }
            return text
        }
    }

    /// What the generator put into a store, for the tests to compare with.
    public struct GeneratedNote {
        public var title: String
        public var body: String
        public var dateCreated: Double?
        public var displayIndex: Int64
        /// The images of the note: in v2 at most one (on the note), in v3 its attachments' images (nil: an attachment without one).
        public var images: [[UInt8]?]
    }

    /// A store of model `version` with `count` notes. v2 notes have an image half of the time;
    /// v3 notes have 0–3 attachments, most with an image (PNG bytes of varied sizes), some without.
    /// Notes with an image always have a dateCreated (v4 requires one on Attachment). A v3 store also
    /// has two attachments without a note, one with a 7×3 image and one without an image.
    @discardableResult
    public static func generateSource(version: Int, at path: String, count: Int = 240, seed: UInt64 = 4) throws -> [GeneratedNote] {
        var random = SeededGenerator(seed: seed &+ UInt64(version))
        let storeModel = try Self.model(version: version)
        var generated: [GeneratedNote] = []
        try StoreAccess.createStore(at: path, model: storeModel) { store in
            for i in 0..<count {
                let note = try store.insertObject(entityName: "Note")
                var g = GeneratedNote(title: "Note \(i + 1)", body: body(i, &random), dateCreated: nil, displayIndex: Int64(i), images: [])
                if version == 2 && random.chance(0.5) {
                    g.images = [PNGImage.encode(width: random.int(1...160), height: random.int(1...120), shade: UInt8(i % 256))]
                } else if version == 3 {
                    for _ in 0..<random.int(0...3) {
                        g.images.append(random.chance(0.8) ? PNGImage.encode(width: random.int(1...160), height: random.int(1...120), shade: UInt8(i % 256)) : nil)
                    }
                }
                if !g.images.isEmpty || random.chance(0.7) {
                    g.dateCreated = 500_000_000 + Double(i) * 3_600 + Double(random.int(0...3_599))
                }
                try note.setValue(.string(g.title), forKey: "title")
                try note.setValue(.string(g.body), forKey: "body")
                try note.setValue(g.dateCreated.map { .date($0) } ?? .null, forKey: "dateCreated")
                try note.setValue(.integer(g.displayIndex), forKey: "displayIndex")
                if version == 2, let image = g.images.first ?? nil {
                    try note.setValue(.binary(image), forKey: "image")
                }
                if version == 3 {
                    for (k, image) in g.images.enumerated() {
                        let attachment = try store.insertObject(entityName: "Attachment")
                        try attachment.setValue(.date((g.dateCreated ?? 500_000_000) + Double(k)), forKey: "dateCreated")
                        if let image = image { try attachment.setValue(.binary(image), forKey: "image") }
                        try attachment.setValue(.object(note), forKey: "note")
                    }
                }
                generated.append(g)
            }
            if version == 3 {
                // Two attachments that belong to no note: their caption is empty.
                for (k, image) in [PNGImage.encode(width: 7, height: 3), nil].enumerated() {
                    let attachment = try store.insertObject(entityName: "Attachment")
                    try attachment.setValue(.date(400_000_000 + Double(k)), forKey: "dateCreated")
                    if let image = image { try attachment.setValue(.binary(image), forKey: "image") }
                }
            }
        }
        return generated
    }

    /// The model version of a store: the first of v4, v3, v2, v1 whose version hashes it matches.
    public static func version(ofStoreAt path: String) throws -> Int {
        for version in versions.reversed() {
            let candidate = try Self.model(version: version)
            do {
                let store = try PersistentStore.open(at: path, model: candidate, readOnly: true, checkVersion: true)
                store.close()
                return version
            } catch let error as MigrationError where error.code == .incompatibleVersionHash {
                continue
            }
        }
        throw MigrationError(.migrationMissingSourceModel, "the store '\(path)' matches none of the UnCloudNotes models v1–v4")
    }

    /// Brings the store at `path` (any of v1–v4) to v4 at `destination`, one version at a time
    /// (v1 → v2 → v3 → v4) through intermediate files that are removed afterwards. Returns one
    /// report per step ("v1 -> v2", …); a v4 store is an error (nothing to migrate).
    public static func migrateToV4(storeAt path: String, destination: String) throws -> [(label: String, report: MigrationReport)] {
        let start = try version(ofStoreAt: path)
        guard start < 4 else {
            throw MigrationError(.migrationManagerSourceStore, "the store '\(path)' is already at v4")
        }
        var reports: [(String, MigrationReport)] = []
        var current = path
        var intermediates: [String] = []
        defer {
            for file in intermediates { for suffix in ["", "-wal", "-shm", "-journal"] { FileIO.remove(file + suffix) } }
        }
        for version in start..<4 {
            let next = version == 3 ? destination : destination + ".v\(version + 1)-step"
            if version < 3 { intermediates.append(next) }
            reports.append(("v\(version) -> v\(version + 1)", try manager(from: version).migrateStore(from: current, to: next)))
            current = next
        }
        return reports
    }

    public static func run(in directory: String) throws -> ScenarioResult {
        var result = ScenarioResult(number: 4, title: "UnCloudNotes: v3 -> v4 with inheritance, and any version up to v4")
        for version in [3, 1, 2] {
            let source = directory + "/UnCloudNotes-v\(version).sqlite", destination = directory + "/UnCloudNotes-v\(version)-to-v4.sqlite"
            try generateSource(version: version, at: source)
            result.sourcePaths.append(source)
            result.destinationPaths.append(destination)
            for (label, report) in try migrateToV4(storeAt: source, destination: destination) {
                result.reports.append(("from v\(version): \(label)", report))
            }
        }
        result.samples = try StoreAccess.readStore(at: directory + "/UnCloudNotes-v3-to-v4.sqlite", model: try model(version: 4)) { store in
            var lines: [String] = []
            for attachment in try StoreAccess.all("ImageAttachment", in: store).prefix(4) {
                let caption = try attachment.string("caption") ?? ""
                lines.append("ImageAttachment \(try attachment.value(forKey: "width"))x\(try attachment.value(forKey: "height")) caption=\"\(caption)\" (\(caption.count) characters) note=\(try attachment.value(forKeyPath: "note.title"))")
            }
            let plain = try StoreAccess.all("Attachment", in: store, exact: true)
            lines.append("Attachment (without image): \(plain.count)")
            return lines
        }
        return result
    }
}
