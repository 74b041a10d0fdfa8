import CDMigrate

/// Scenario 3's StepOne policy: makes a PrintedEvent for each Event, its `printedDate` the event's
/// time stamp as a medium date and medium time (`MediumDateFormat`, what `DateFormatter` prints for
/// en_US in UTC), as the original `createDestinationInstancesForSourceInstance:…` did with an
/// `NSDateFormatter`. A nil time stamp gives a nil `printedDate`; one with no calendar text (not
/// finite, or more than 1e15 seconds from 2001) fails the migration with an expression-evaluation
/// error (code 5), as in C and Python.
public final class StepOneEntityMigrationPolicy: EntityMigrationPolicy {
    public static let name = "StepOneEntityMigrationPolicy"

    public override init() { super.init() }

    public override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
        let printed = try manager.createDestinationInstance(entityName: "PrintedEvent")
        switch try sInstance.value(forKey: "timeStamp") {
        case .null:
            break
        case .date(let seconds):
            guard let text = MediumDateFormat.string(fromReferenceSeconds: seconds) else {
                throw MigrationError(.expressionEvaluation, "\(Self.name): the date \(seconds) (seconds since 2001) is out of range")
            }
            try printed.setValue(.string(text), forKey: "printedDate")
        case let other:
            throw MigrationError(.expressionEvaluation, "\(Self.name) takes a date, not a \(other.typeName) value")
        }
        try manager.associate(sourceInstance: sInstance, withDestinationInstance: printed, for: mapping)
    }
}
