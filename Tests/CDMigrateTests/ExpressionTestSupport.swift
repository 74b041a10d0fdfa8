import XCTest

@testable import CDMigrate

/// A small model and object graph for expression and predicate tests:
/// Note { title, body, dateCreated, displayIndex, rating, archived, attachments → Attachment*, tags → Tag* }
/// Attachment { dateCreated, caption, note → Note }, Tag { name, notes → Note* }.
final class ExpressionFixture {
    let model: ManagedObjectModel
    let note: ManagedObject
    let attachments: [ManagedObject]
    let tags: [ManagedObject]
    let emptyNote: ManagedObject

    init() throws {
        model = try ManagedObjectModel(
            json: """
                {"name": "Notes", "entities": [
                  {"name": "Note", "attributes": [
                     {"name": "title", "type": "string"}, {"name": "body", "type": "string"},
                     {"name": "dateCreated", "type": "date"}, {"name": "displayIndex", "type": "integer32"},
                     {"name": "rating", "type": "double"}, {"name": "archived", "type": "boolean"}],
                   "relationships": [
                     {"name": "attachments", "destination": "Attachment", "inverse": "note", "toMany": true},
                     {"name": "tags", "destination": "Tag", "inverse": "notes", "toMany": true}]},
                  {"name": "Attachment", "attributes": [{"name": "dateCreated", "type": "date"}, {"name": "caption", "type": "string"}],
                   "relationships": [{"name": "note", "destination": "Note", "inverse": "attachments"}]},
                  {"name": "Tag", "attributes": [{"name": "name", "type": "string"}],
                   "relationships": [{"name": "notes", "destination": "Note", "inverse": "tags", "toMany": true}]}
                ]}
                """)
        let noteEntity = try XCTUnwrap(model.entity(named: "Note"))
        let attachmentEntity = try XCTUnwrap(model.entity(named: "Attachment"))
        let tagEntity = try XCTUnwrap(model.entity(named: "Tag"))
        let note = ManagedObject(entity: noteEntity, primaryKey: 1)
        self.note = note
        try note.setValue("Groceries", forKey: "title")
        try note.setValue("Milk, eggs and bread", forKey: "body")
        try note.setValue(.date(100), forKey: "dateCreated")
        try note.setValue(3, forKey: "displayIndex")
        try note.setValue(4.5, forKey: "rating")
        try note.setValue(true, forKey: "archived")
        attachments = try (1...3).map { i in
            let a = ManagedObject(entity: attachmentEntity, primaryKey: Int64(i))
            try a.setValue(.date(Double(i) * 10), forKey: "dateCreated")
            try a.setValue(i == 2 ? .null : .string("caption \(i)"), forKey: "caption")
            try a.setValue(.object(note), forKey: "note")
            return a
        }
        try note.setValue(.collection(attachments.map { .object($0) }), forKey: "attachments")
        tags = try ["home", "Shopping", "café"].enumerated().map { i, name in
            let t = ManagedObject(entity: tagEntity, primaryKey: Int64(i + 1))
            try t.setValue(.string(name), forKey: "name")
            return t
        }
        try note.setValue(.collection(tags.map { .object($0) }), forKey: "tags")
        emptyNote = ManagedObject(entity: noteEntity, primaryKey: 2)
    }

    /// Free-standing instances keep their relationship values themselves, strongly (as
    /// NSManagedObjects do): the note and its attachments point at each other, a reference cycle
    /// that only clearing one side breaks. Tests may have set more; every side is cleared.
    deinit {
        for object in [note, emptyNote] + attachments + tags {
            for relationship in object.entity.relationships {
                try? object.setValue(relationship.isToMany ? .collection([]) : .null, forKey: relationship.name)
            }
        }
    }
}

/// An environment like the migration manager's: $source, $destination, $manager (answering two
/// selectors and `sourceContext`), $entityPolicy, and host functions of "MigrationFunctions".
final class TestEnvironment: ExpressionEnvironment {
    var variables: [String: Value] = [:]
    var calls: [String] = []

    func variable(_ name: String) throws -> Value? {
        if name == "manager" || name == "entityPolicy" || name == "entityMapping" { return .string("<\(name)>") }
        return variables[name]
    }

    func keyPath(_ keys: [String], onVariable name: String) throws -> Value? {
        switch (name, keys) {
        case ("manager", ["sourceContext"]): return .string("source context")
        case ("entityMapping", ["name"]): return "NoteToNote"
        case ("entityMapping", ["userInfo", "modelVersion"]): return "4"
        default: return nil
        }
    }

    func invoke(selector: String, onVariable name: String, arguments: [Value]) throws -> Value? {
        calls.append("\(name) \(selector) \(arguments.count)")
        switch (name, selector) {
        case ("manager", "destinationInstancesForEntityMappingNamed:sourceInstances:"):
            // Stand-in: the "destination" of each source instance is its title or caption.
            return .collection(try arguments[1].elements.map { try $0.object?.value(forKey: "caption") ?? .null })
        case ("manager", "fetchRequestForSourceEntityNamed:predicateString:"):
            return .collection([arguments[0], arguments[1]])
        case ("manager", _):
            throw MigrationError(.expressionEvaluation, "$manager does not respond to '\(selector)'")
        case ("entityPolicy", "customSelector:"):
            return .string("custom(\(arguments[0]))")
        default:
            return nil
        }
    }

    func invokeHostFunction(className: String, selector: String, arguments: [Value]) throws -> Value {
        calls.append("\(className) \(selector)")
        guard className == "MigrationFunctions", selector == "getFirstName:" else {
            throw MigrationError(.expressionEvaluation, "no host function \(className).\(selector)")
        }
        guard case .string(let name) = arguments[0] else { return .null }
        return .string(String(name.split(separator: " ").first ?? ""))
    }
}
