import XCTest

@testable import CDMigrate

/// The manager's calls that write the destination answer an error naming the call, not a crash,
/// when no migration runs (before `migrateStore` or after it returned).
final class ManagerCallsOutsideARunTests: XCTestCase {
    func testCallsThatWriteTheDestinationNameThemselvesWhenNoMigrationRuns() throws {
        let model = try ManagedObjectModel(json: storeTestModelJSON)
        let manager = try MigrationManager(
            sourceModel: model, destinationModel: model,
            mappingModels: [try MappingModel.inferred(from: model, to: model)])
        let item = try XCTUnwrap(model.entity(named: "Item"))
        let calls: [(String, () throws -> Void)] = [
            (
                "createDestinationInstance(entityName:)",
                { _ = try manager.createDestinationInstance(entityName: "Item") }
            ),
            ("createDestinationInstance(entityName:)", { _ = try manager.createDestinationInstance(entity: item) }),
            (
                "createDestinationInstances(entityName:values:)",
                { _ = try manager.createDestinationInstances(entityName: "Item", values: [[:]]) }
            ),
            (
                "relate(entityName:relationshipName:owners:targets:)",
                { try manager.relate(entityName: "Item", relationshipName: "tags", owners: [1], targets: [1]) }
            ),
        ]
        for (name, call) in calls {
            XCTAssertThrowsError(try call(), name) { error in
                let error = error as? MigrationError
                XCTAssertEqual(error?.code, .invalidArgument, name)
                XCTAssertEqual(error?.message, "\(name) is only available while a migration runs")
            }
        }
    }
}
