import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `cdm_field` of cdmigrate.h, field for field: one value with its name (or attribute index) and
/// type, as predicate arguments, bulk reads of an instance and bulk writes pass them — so a host
/// (Python through ctypes) crosses the boundary once per row, not once per value.
struct CField {
    var name: UnsafePointer<CChar>?
    var index: Int32
    var type: Int32
    var integer: Int64
    var number: Double
    var data: UnsafeRawPointer?
    var length: Int
    var object: OpaquePointer?
}

/// enum cdm_value_type.
enum ValueTypeCode {
    static func of(_ value: Value) -> Int32 {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .integer: return 2
        case .double: return 3
        case .decimal: return 4
        case .string: return 5
        case .date: return 6
        case .binary: return 7
        case .uuid: return 8
        case .uri: return 9
        case .object: return 10
        case .collection: return 11
        case .migrationManager: return 12
        case .dictionary: return 13
        }
    }
}

enum FieldConversion {
    /// The engine value a host's field stands for; `what` names it in errors.
    static func value(of field: CField, _ what: @autoclosure () -> String) throws -> Value {
        func text() throws -> String {
            try CString.argument(
                field.data?.assumingMemoryBound(to: CChar.self), length: field.length, "the text of \(what())")
        }
        func bytes() throws -> [UInt8] {
            try HostBytes.copy(field.data, length: field.length, "the data pointer of \(what())")
        }
        switch field.type {
        case 0: return .null
        case 1: return .bool(field.integer != 0)
        case 2: return .integer(field.integer)
        case 3: return .double(field.number)
        case 4:
            let t = try text()
            guard Double(t) != nil else {
                throw MigrationError.mismatch("\(what()) is a decimal whose text '\(t)' is not a number")
            }
            return .decimal(t)
        case 5: return .string(try text())
        case 6: return .date(field.number)
        case 7: return .binary(try bytes())
        case 8:
            guard let data = field.data else { throw MigrationError.misuse("the UUID pointer of \(what()) is NULL") }
            return .uuid(Array(UnsafeRawBufferPointer(start: data, count: 16)))
        case 9: return .uri(try text())
        case 10:
            guard let handle = field.object else { return .null }
            return .object(try ThreadState.current.entry(handle, as: ObjectEntry.self, "object of \(what())").object)
        default:
            throw MigrationError.mismatch(
                "\(what()) has type \(field.type), which is not a cdm_value_type a field can carry (0–10)")
        }
    }

    /// Predicate arguments: unnamed fields are the %@ arguments in order, named ones bind $name.
    static func arguments(_ fields: UnsafePointer<CField>?, _ count: Int) throws -> (
        arguments: [Value], variables: [String: Value]
    ) {
        guard count > 0 else { return ([], [:]) }
        guard let fields = fields else { throw MigrationError.misuse("the arguments array is NULL") }
        var arguments: [Value] = []
        var variables: [String: Value] = [:]
        for i in 0..<count {
            let field = fields[i]
            if let name = field.name {
                let key = try CString.argument(name, "the name of argument \(i)")
                variables[key.hasPrefix("$") ? String(key.dropFirst()) : key] = try value(
                    of: field, "argument \(i) ($\(key))")
            } else {
                arguments.append(try value(of: field, "argument \(i)"))
            }
        }
        return (arguments, variables)
    }
}

/// The flags of cdm_object_set_fields.
enum FieldFlags {
    static let skipUnknown: Int32 = 1
    static let skipNull: Int32 = 2
}

/// Sets an instance's attributes from host fields (`setValuesForKeysWithDictionary:`).
func setFields(_ object: ManagedObject, _ fields: UnsafePointer<CField>?, _ count: Int, _ flags: Int32) throws {
    guard count > 0 else { return }
    guard let fields = fields else { throw MigrationError.misuse("the fields array is NULL") }
    let entity = object.entity
    for i in 0..<count {
        let field = fields[i]
        let attribute: AttributeDescription
        if let namePointer = field.name {
            let name = try CString.argument(namePointer, "the name of field \(i)")
            guard let found = entity.attribute(named: name) else {
                if flags & FieldFlags.skipUnknown != 0 { continue }
                if entity.relationship(named: name) != nil {
                    throw MigrationError.mismatch(
                        "field \(i): '\(entity.name).\(name)' is a relationship: set it with cdm_object_set_object or cdm_object_add_object"
                    )
                }
                throw MigrationError.notFound("field \(i): entity '\(entity.name)' has no attribute '\(name)'")
            }
            attribute = found
        } else {
            guard field.index >= 0, Int(field.index) < entity.attributes.count else {
                if flags & FieldFlags.skipUnknown != 0 { continue }
                throw MigrationError.notFound(
                    "field \(i): attribute index \(field.index) is out of range: entity '\(entity.name)' has \(entity.attributes.count) attributes"
                )
            }
            attribute = entity.attributes[Int(field.index)]
        }
        if field.type == 0 && flags & FieldFlags.skipNull != 0 { continue }
        let value = try FieldConversion.value(of: field, "field \(i) ('\(entity.name).\(attribute.name)')")
        do {
            try object.setValue(value, for: attribute)
        } catch let error as MigrationError where error.code == .invalidArgument {
            throw MigrationError(.mismatch, "field \(i) ('\(entity.name).\(attribute.name)'): \(error.message)")
        }
    }
}
