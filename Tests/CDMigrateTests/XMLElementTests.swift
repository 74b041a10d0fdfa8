import XCTest

@testable import CDMigrate

final class XMLElementTests: XCTestCase {
    func testReadsElementsAttributesAndText() throws {
        let xml =
            "<model a=\"1\"><entity name=\"Note\"><attribute name=\"title\"/></entity>\n<entity name=\"Tag\">x<![CDATA[<y>]]></entity></model>"
        let root = try XMLElement.parse(bytes: Array(xml.utf8), name: "test.xml")
        XCTAssertEqual(root.name, "model")
        XCTAssertEqual(root["a"], "1")
        XCTAssertEqual(root.children(named: "entity").map { $0["name"] }, ["Note", "Tag"])
        XCTAssertEqual(root.child(named: "entity")?.child(named: "attribute")?["name"], "title")
        XCTAssertEqual(root.children[1].text, "x<y>")
        XCTAssertEqual(root.children[1].line, 2)
    }

    func testMalformedXMLNamesTheFileAndLine() {
        XCTAssertThrowsError(try XMLElement.parse(bytes: Array("<a>\n<b></a>".utf8), name: "broken.xml")) { error in
            let e = error as! MigrationError
            XCTAssertEqual(e.code, .invalidModel)
            XCTAssertTrue(e.message.contains("broken.xml") && e.message.contains("line 2"), e.message)
        }
        XCTAssertThrowsError(try XMLElement.parse(bytes: [], name: "empty.xml"))
    }

    func testNestingBeyondLibxml2sLimitIsAnErrorNotACrash() {
        let xml = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        XCTAssertThrowsError(try XMLElement.parse(bytes: Array(xml.utf8), name: "deep.xml"))
    }

    func testReadsXcodesModelFile() throws {
        let root = try XMLElement.parse(
            file: TestPaths.fixtures
                + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld/UnCloudNotesDataModel_v4.xcdatamodel/contents"
        )
        XCTAssertEqual(root.name, "model")
        XCTAssertFalse(root.children(named: "entity").isEmpty)
    }
}
