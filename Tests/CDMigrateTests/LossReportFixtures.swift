import Foundation

@testable import CDMigrate

/// Small models and stores for the loss report: folders of posts, and the chain seen in real
/// use, where the mapping model of one step was missing and the inferred step that replaced it
/// dropped `Post.color` (renamed `hue` in v3 without a renaming identifier).
enum LossReportFixtures {
    static func model(version: Int, postAttributes: String) -> String {
        """
        {"name": "Blog", "versionIdentifier": "\(version)", "entities": [
          {"name": "Folder", "attributes": [{"name": "name", "type": "string", "optional": true}],
           "relationships": [{"name": "posts", "destination": "Post", "inverse": "folder", "toMany": true}]},
          {"name": "Post", "attributes": [\(postAttributes)],
           "relationships": [{"name": "folder", "destination": "Folder", "inverse": "posts", "toMany": false, "optional": true}]}
        ]}
        """
    }
    static let v1 = model(
        version: 1,
        postAttributes:
            #"{"name": "title", "type": "string", "optional": true}, {"name": "color", "type": "string", "optional": true}"#
    )
    static let v2 = model(
        version: 2,
        postAttributes:
            #"{"name": "title", "type": "string", "optional": true}, {"name": "color", "type": "string", "optional": true}, {"name": "subtitle", "type": "string", "optional": true}"#
    )
    static let v3 = model(
        version: 3,
        postAttributes:
            #"{"name": "title", "type": "string", "optional": true}, {"name": "hue", "type": "string", "optional": true}, {"name": "subtitle", "type": "string", "optional": true}"#
    )

    /// The written mapping of the chain's first step (v1 → v2).
    static let v1ToV2 = """
        {"sourceModel": "v1", "destinationModel": "v2", "entityMappings": [
          {"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"name": "$source.name"}},
          {"name": "PostToPost", "sourceEntity": "Post", "destinationEntity": "Post", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"title": "$source.title", "color": "$source.color"},
           "relationshipMappings": {"folder": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"FolderToFolder\\", $source.folder)"}}
        ]}
        """

    /// A folder holding v1, v2 and v3 and the mapping model of v1 → v2 only.
    static func chainFolder(in directory: String) throws -> String {
        let folder = directory + "/models"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, text) in [("v1.json", v1), ("v2.json", v2), ("v3.json", v3), ("v1-to-v2.mapping.json", v1ToV2)] {
            try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        return folder
    }

    /// A v1 store of `posts` posts with a color, in two folders.
    static func store(at path: String, posts: Int = 1_001) throws {
        let model = try ManagedObjectModel(json: v1)
        try makeStore(path, model) { store in
            let folders = try (0..<2).map { try insert(store, "Folder", ["name": .string("Folder \($0)")]) }
            for i in 0..<posts {
                let post = try insert(
                    store, "Post", ["title": .string("Post \(i)"), "color": .string(i % 2 == 0 ? "red" : "blue")])
                try post.setValue(.object(folders[i % 2]), forKey: "folder")
            }
        }
    }
}
