import CDMigrate
import Foundation

extension JSON {
    /// The value as JSONSerialization's objects, so that the commands' documents embed the
    /// engine's own JSON (the one report encoder) key for key.
    var foundationObject: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let value): return value
        case .integer(let value): return Int(truncatingIfNeeded: value)
        case .double(let value): return value
        case .string(let value): return value
        case .array(let values): return values.map(\.foundationObject)
        case .object(let members):
            var object: [String: Any] = [:]
            for (key, value) in members { object[key] = value.foundationObject }
            return object
        }
    }

    /// The members of an object as a dictionary ([:] for any other value).
    var foundationDictionary: [String: Any] { foundationObject as? [String: Any] ?? [:] }
}
