// libFuzzer entry point for the engine's readers of untrusted text and bytes. Compiled together
// with Sources/CDMigrate as one module by scripts/fuzz.sh (never part of the package build).
// The target is chosen by the CDMIGRATE_FUZZ_TARGET environment variable; every target must
// either succeed or throw: a trap, a stack overflow or a hang is a finding.
#if canImport(Glibc)
import Glibc
#endif

enum FuzzTarget: String, CaseIterable {
    case valueExpression = "value-expression"
    case predicate
    case regularExpression = "regular-expression"
    case modelJSON = "model-json"
    case mappingJSON = "mapping-json"
    case binaryPlist = "binary-plist"
    case xcodeModel = "xcode-model"
    case xcodeMapping = "xcode-mapping"
    case compiledModel = "compiled-model"

    static let selected: FuzzTarget = {
        guard let name = getenv("CDMIGRATE_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            fputs("set CDMIGRATE_FUZZ_TARGET to one of: \(names)\n", stderr)
            exit(2)
        }
        return target
    }()

    func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        // No more format arguments than '%'s: left-over arguments are refused.
        let specifiers = text.utf8.filter { $0 == UInt8(ascii: "%") }.count
        switch self {
        case .valueExpression:
            guard let expression = try? ExpressionParser.parseExpression(text, arguments: Array((["x", 1, 2.5] as [Value]).prefix(specifiers))) else { return }
            FuzzTarget.checkNotTooDeep { try ExpressionEvaluator().evaluate(expression, object: .string("self")) }
            _ = try? ExpressionParser.parseExpression(expression.description)
        case .predicate:
            guard let predicate = try? ExpressionParser.parsePredicate(text, arguments: Array((["name", 1] as [Value]).prefix(specifiers)), variables: ["v": 3]) else { return }
            FuzzTarget.checkNotTooDeep { try PredicateEvaluator().evaluate(predicate, object: .string("self")) }
            _ = PredicateSQLTranslator.translate(predicate, resolver: Columns())
            _ = try? ExpressionParser.parsePredicate(predicate.description)
        case .regularExpression:
            // Pattern, a zero byte, then the text.
            let split = bytes.firstIndex(of: 0) ?? bytes.count
            let pattern = String(decoding: bytes[..<split], as: UTF8.self)
            let subject = String(decoding: bytes[Swift.min(split + 1, bytes.count)...], as: UTF8.self)
            for caseInsensitive in [false, true] {
                _ = try? RegularExpression(pattern, caseInsensitive: caseInsensitive).wholeMatch(subject)
            }
        // The bytes as a JSON file is read: refused unless UTF-8, then parsed.
        case .modelJSON:
            guard let checked = try? UTF8Text.decode(bytes, file: "model.json", code: .invalidJSON) else { return }
            _ = try? ManagedObjectModel(json: checked)
        case .mappingJSON:
            guard let checked = try? UTF8Text.decode(bytes, file: "mapping.json", code: .invalidJSON) else { return }
            _ = try? MappingModel(json: checked)
        case .binaryPlist:
            if let value = try? BinaryPropertyList.decode(bytes) {
                _ = try? BinaryPropertyList.decode(BinaryPropertyList.encode(value))
            }
        case .xcodeModel:
            guard let root = try? XMLElement.parse(bytes: bytes, name: "contents") else { return }
            _ = try? XcodeModelReader.model(document: root, file: "contents", name: "Model")
        case .xcodeMapping:
            guard let root = try? XMLElement.parse(bytes: bytes, name: "xcmapping.xml", code: .invalidMapping),
                  let document = try? XcodeStoreDocument.read(root: root, name: "xcmapping.xml", code: .invalidMapping) else { return }
            // Without models (names only), then against the seeds' models, as Xcode's compiler checks them.
            for (source, destination) in [(nil, nil), FuzzTarget.mappingModels] {
                var reader = XcodeMappingModelReader(document: document, sourceModel: source, destinationModel: destination)
                _ = try? reader.compile()
            }
        case .compiledModel:
            // A keyed archive (`.mom`, or `.cdm` read as a mapping model), or a DEFLATE stream
            // holding one (a store's model cache).
            _ = try? CompiledModelReader.model(fromArchive: bytes, name: "Model")
            _ = try? CompiledMappingModelReader.mapping(fromArchive: bytes, name: "Mapping", what: "the mapping model")
            if let archive = try? Inflate.inflate(bytes, limit: 1 << 20, code: .invalidModel, what: "the model cache") {
                _ = try? CompiledModelReader.model(fromArchive: archive, name: nil)
            }
        }
    }

    /// Runs an evaluation of a parsed expression: the evaluator's depth limit counts no more levels
    /// than the parser does, so it must never refuse what the parser accepted.
    static func checkNotTooDeep(_ body: () throws -> Any) {
        do { _ = try body() } catch let error as MigrationError where error.message.contains("levels (an expression or predicate built by hand") {
            fatalError("a parsed expression was refused by the evaluator's depth limit: \(error.message)")
        } catch {}
    }

    /// The source and destination models of the mapping seeds (UnCloudNotes v2 and v3, from the
    /// fixtures; the fuzzer runs at the repository's root), nil when they cannot be read.
    static let mappingModels: (ManagedObjectModel?, ManagedObjectModel?) = {
        let folder = "Tests/Fixtures/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld/"
        return (try? XcodeModelReader.model(xcdatamodel: folder + "UnCloudNotesDataModel_v2.xcdatamodel"),
                try? XcodeModelReader.model(xcdatamodel: folder + "UnCloudNotesDataModel_v3.xcdatamodel"))
    }()

    /// Every key path is an integer column, so that comparisons translate.
    struct Columns: SQLColumnResolver {
        func sqlColumn(forKeyPath keys: [String]) -> (sql: String, type: AttributeType)? {
            keys.count == 1 ? ("Z" + keys[0].uppercased(), keys[0].hasPrefix("s") ? .string : .integer64) : nil
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzTarget.selected.run(bytes)
    return 0
}
