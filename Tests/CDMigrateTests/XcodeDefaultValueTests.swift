import Foundation
import XCTest

@testable import CDMigrate

/// Xcode models' `defaultValueString` read as momc reads it: Foundation's lenient conversions,
/// with a warning for every odd text, so a model Xcode compiles is never refused for its defaults.
final class XcodeDefaultValueTests: XCTestCase {
    func read(_ attributes: String) throws -> ManagedObjectModel {
        let xml =
            #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><model type="com.apple.IDECoreDataModeler.DataModel"><entity name="E" representedClassName="E">\#(attributes)</entity></model>"#
        return try XcodeModelReader.model(
            document: try XMLElement.parse(bytes: Array(xml.utf8), name: "t.xcdatamodel/contents"),
            file: "t.xcdatamodel/contents", name: "t")
    }

    func defaultValue(_ model: ManagedObjectModel, _ name: String) throws -> Value {
        try XCTUnwrap(model.entity(named: "E")?.attribute(named: name), name).defaultValue
    }

    func testAnIntegerWithABooleanDefaultIsReadAsMomcReadsItWithAWarning() throws {
        let model = try read(
            #"""
            <attribute name="off" attributeType="Integer 16" defaultValueString="NO" usesScalarValueType="YES"/>
            <attribute name="on" attributeType="Integer 32" defaultValueString="YES" usesScalarValueType="YES"/>
            <attribute name="plain" attributeType="Integer 64" defaultValueString="7" usesScalarValueType="YES"/>
            """#)
        XCTAssertEqual(try defaultValue(model, "off"), .integer(0))
        XCTAssertEqual(try defaultValue(model, "on"), .integer(0), "NSString.integerValue of \"YES\" is 0")
        XCTAssertEqual(try defaultValue(model, "plain"), .integer(7))
        XCTAssertTrue(
            model.warnings.contains {
                $0.contains(
                    "attribute 'E.off': default value 'NO' is not an integer; read as momc reads it (NSString.integerValue): 0"
                )
            }, "\(model.warnings)")
        XCTAssertTrue(
            model.warnings.contains { $0.contains("'E.on'") && $0.contains("line ") },
            "the warning names the line: \(model.warnings)")
        XCTAssertFalse(model.warnings.contains { $0.contains("'E.plain'") }, "\(model.warnings)")
    }

    func testAStepAddingAnIntegerWithDefaultNOMigratesWithZero() throws {
        let v1 = try read(#"<attribute name="title" optional="YES" attributeType="String"/>"#)
        let v2 = try read(
            #"""
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="archived" attributeType="Integer 16" defaultValueString="NO" usesScalarValueType="YES"/>
            """#)
        let scratch = ScratchDirectory()
        try makeStore(scratch.file("v1.sqlite"), v1) { store in try insert(store, "E", ["title": "kept"]) }
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping).migrateStore(
            from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))
        let store = try PersistentStore.open(at: scratch.file("v2.sqlite"), model: v2)
        defer { store.close() }
        let row = try XCTUnwrap(fetchAll(store, "E").first)
        XCTAssertEqual(try row.value(forKey: "archived"), .integer(0))
        XCTAssertEqual(try row.value(forKey: "title"), "kept")
    }

    func testOddIntegerTexts() throws {
        let model = try read(
            #"""
            <attribute name="empty" attributeType="Integer 16" defaultValueString="" usesScalarValueType="YES"/>
            <attribute name="spaces" attributeType="Integer 16" defaultValueString="  12 " usesScalarValueType="YES"/>
            <attribute name="point" attributeType="Integer 32" defaultValueString="1.9" usesScalarValueType="YES"/>
            <attribute name="signed" attributeType="Integer 32" defaultValueString="-4x" usesScalarValueType="YES"/>
            <attribute name="wide" attributeType="Integer 16" defaultValueString="70000" usesScalarValueType="YES"/>
            <attribute name="huge" attributeType="Integer 64" defaultValueString="99999999999999999999" usesScalarValueType="YES"/>
            <attribute name="low" attributeType="Integer 64" defaultValueString="-99999999999999999999" usesScalarValueType="YES"/>
            """#)
        XCTAssertEqual(try defaultValue(model, "empty"), .integer(0))
        XCTAssertEqual(try defaultValue(model, "spaces"), .integer(12))
        XCTAssertEqual(try defaultValue(model, "point"), .integer(1), "the digits before the point")
        XCTAssertEqual(try defaultValue(model, "signed"), .integer(-4))
        XCTAssertEqual(try defaultValue(model, "wide"), .integer(32767))
        XCTAssertEqual(try defaultValue(model, "huge"), .integer(Int64.max), "integerValue saturates")
        XCTAssertEqual(try defaultValue(model, "low"), .integer(Int64.min))
        for name in ["empty", "spaces", "point", "signed", "huge", "low"] {
            XCTAssertTrue(
                model.warnings.contains { $0.contains("'E.\(name)': default value") }, "\(name): \(model.warnings)")
        }
        XCTAssertTrue(
            model.warnings.contains {
                $0.contains(
                    "'E.wide': default value 70000 does not fit in integer16; the nearest value it holds, 32767, is taken"
                )
            }, "\(model.warnings)")
    }

    func testOddNumberAndBooleanTexts() throws {
        let model = try read(
            #"""
            <attribute name="d" attributeType="Double" defaultValueString=" 2.5kg" usesScalarValueType="YES"/>
            <attribute name="e" attributeType="Double" defaultValueString="1e3" usesScalarValueType="YES"/>
            <attribute name="none" attributeType="Double" defaultValueString="" usesScalarValueType="YES"/>
            <attribute name="f" attributeType="Float" defaultValueString="NO" usesScalarValueType="YES"/>
            <attribute name="y" attributeType="Boolean" defaultValueString="yes" usesScalarValueType="YES"/>
            <attribute name="t" attributeType="Boolean" defaultValueString=" 0002" usesScalarValueType="YES"/>
            <attribute name="n" attributeType="Boolean" defaultValueString="nope" usesScalarValueType="YES"/>
            <attribute name="b" attributeType="Boolean" defaultValueString="YES" usesScalarValueType="YES"/>
            """#)
        XCTAssertEqual(try defaultValue(model, "d"), .double(2.5))
        XCTAssertEqual(try defaultValue(model, "e"), .double(1000))
        XCTAssertEqual(try defaultValue(model, "none"), .double(0))
        XCTAssertEqual(try defaultValue(model, "f"), .double(0))
        XCTAssertEqual(try defaultValue(model, "y"), .bool(true))
        XCTAssertEqual(try defaultValue(model, "t"), .bool(true), "boolValue skips leading zeros")
        XCTAssertEqual(try defaultValue(model, "n"), .bool(false))
        XCTAssertEqual(try defaultValue(model, "b"), .bool(true))
        for name in ["d", "none", "f", "y", "t", "n"] {
            XCTAssertTrue(
                model.warnings.contains { $0.contains("'E.\(name)': default value") }, "\(name): \(model.warnings)")
        }
        XCTAssertFalse(model.warnings.contains { $0.contains("'E.e'") || $0.contains("'E.b'") }, "\(model.warnings)")
    }

    func testFoundationConversions() {
        XCTAssertEqual(XcodeDefaultValue.integerValue("\t+15abc"), 15)
        XCTAssertEqual(XcodeDefaultValue.integerValue("-9223372036854775808"), Int64.min)
        XCTAssertEqual(XcodeDefaultValue.integerValue("9223372036854775807"), Int64.max)
        XCTAssertEqual(XcodeDefaultValue.integerValue("- 3"), 0)
        XCTAssertEqual(XcodeDefaultValue.doubleValue(".5"), 0.5)
        XCTAssertEqual(XcodeDefaultValue.doubleValue("-1.e2"), -100)
        XCTAssertEqual(XcodeDefaultValue.doubleValue("1."), 1)
        XCTAssertEqual(XcodeDefaultValue.doubleValue("-3e"), -3, "an exponent without digits is not taken")
        XCTAssertEqual(XcodeDefaultValue.doubleValue("e5"), 0)
        XCTAssertTrue(XcodeDefaultValue.boolValue("T"))
        XCTAssertTrue(XcodeDefaultValue.boolValue("-1"))
        XCTAssertFalse(XcodeDefaultValue.boolValue("0"))
        XCTAssertFalse(XcodeDefaultValue.boolValue(""))
        XCTAssertFalse(XcodeDefaultValue.boolValue("NO"))
    }
}
