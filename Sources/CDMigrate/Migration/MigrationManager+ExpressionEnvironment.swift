/// The value-expression variables of a migration: `$source`, `$destination`, `$manager`,
/// `$entityMapping`, `$entityPolicy`, `$propertyMapping`.
extension MigrationManager: ExpressionEnvironment {
    package func variable(_ name: String) throws -> Value? {
        switch name {
        case "source": return run.currentSource.map { .object($0) } ?? .null
        case "destination": return run.currentDestination.map { .object($0) } ?? .null
        // `$manager` as a value (an argument of a policy method or host function), where Core
        // Data passes the NSMigrationManager; the policy receives the manager itself.
        case "manager": return .migrationManager
        default: return nil
        }
    }

    package func keyPath(_ keys: [String], onVariable name: String) throws -> Value? {
        guard let first = keys.first else { return nil }
        switch name {
        case "entityMapping":
            guard let mapping = currentEntityMapping else { return .null }
            switch first {
            case "name": return .string(mapping.name)
            case "sourceEntityName": return mapping.sourceEntityName.map { .string($0) } ?? .null
            case "destinationEntityName": return mapping.destinationEntityName.map { .string($0) } ?? .null
            case "mappingType": return .string(mapping.mappingType.rawValue)
            case "entityMigrationPolicyClassName":
                return mapping.entityMigrationPolicyClassName.map { .string($0) } ?? .null
            case "userInfo":
                guard keys.count > 1 else { return .null }
                return mapping.userInfo[keys[1]] ?? .null
            default:
                throw MigrationError(.expressionEvaluation, "$entityMapping has no key '\(first)'")
            }
        case "propertyMapping":
            guard let property = currentPropertyMapping else { return .null }
            switch first {
            case "name": return .string(property.name)
            case "valueExpression": return property.valueExpressionText.map { .string($0) } ?? .null
            case "userInfo":
                guard keys.count > 1 else { return .null }
                return property.userInfo[keys[1]] ?? .null
            default:
                throw MigrationError(.expressionEvaluation, "$propertyMapping has no key '\(first)'")
            }
        case "manager":
            switch first {
            case "migrationProgress": return .double(migrationProgress)
            case "userInfo":
                guard keys.count > 1 else { return .null }
                return (userInfo[keys[1]] as? Value) ?? .null
            default:
                throw MigrationError(
                    .expressionEvaluation, "$manager has no key '\(first)' that a value expression can use")
            }
        default:
            return nil
        }
    }

    package func invoke(selector: String, onVariable name: String, arguments: [Value]) throws -> Value? {
        switch name {
        case "manager":
            func instances(_ value: Value) -> [ManagedObject] { value.elements.compactMap { $0.object } }
            func stringArgument(_ i: Int) throws -> String {
                guard i < arguments.count, let s = arguments[i].stringValue else {
                    throw MigrationError(
                        .expressionEvaluation, "$manager \(selector) needs a string as argument \(i + 1)")
                }
                return s
            }
            switch selector {
            case "destinationInstancesForEntityMappingNamed:sourceInstances:":
                let name = try stringArgument(0)
                let objects = try destinationInstances(
                    forEntityMappingName: name, sourceInstances: instances(arguments.element(at: 1) ?? .null))
                return .collection(objects.map { .object($0) })
            case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
                let name = try stringArgument(0)
                let objects = try destinationInstances(
                    forSourceRelationshipNamed: name, sourceInstances: instances(arguments.element(at: 1) ?? .null))
                return .collection(objects.map { .object($0) })
            case "sourceInstancesForEntityMappingNamed:destinationInstances:":
                let name = try stringArgument(0)
                let objects = try sourceInstances(
                    forEntityMappingName: name, destinationInstances: instances(arguments.element(at: 1) ?? .null))
                return .collection(objects.map { .object($0) })
            default:
                throw MigrationError(
                    .expressionEvaluation,
                    "$manager does not answer '\(selector)' (it answers destinationInstancesForEntityMappingNamed:sourceInstances:, destinationInstancesForSourceRelationshipNamed:sourceInstances: and sourceInstancesForEntityMappingNamed:destinationInstances:)"
                )
            }
        case "entityPolicy":
            guard let policy = run.currentPolicy else { return nil }
            if let value = try policy.perform(selector: selector, arguments: arguments, manager: self) { return value }
            let className = currentEntityMapping?.entityMigrationPolicyClassName ?? "NSEntityMigrationPolicy"
            throw MigrationError(
                .expressionEvaluation,
                "the entity policy \(className) of entity mapping '\(currentEntityMapping?.name ?? "?")' has no method for the selector '\(selector)'"
            )
        default:
            return nil
        }
    }

    package func invokeHostFunction(className: String, selector: String, arguments: [Value]) throws -> Value {
        guard let function = hostFunctions[className + " " + selector] else {
            throw MigrationError(
                .expressionEvaluation,
                "no function is registered for FUNCTION(CAST(\"\(className)\", \"Class\"), \"\(selector)\", …); register it with registerFunction(className:selector:)"
            )
        }
        do {
            return try function(arguments)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(.entityMigrationPolicy, "function \(className) \(selector) failed: \(error)")
        }
    }
}
