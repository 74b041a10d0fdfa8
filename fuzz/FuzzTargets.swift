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
            _ = try? ExpressionEvaluator().evaluate(expression, object: .string("self"))
            _ = try? ExpressionParser.parseExpression(expression.description)
        case .predicate:
            guard let predicate = try? ExpressionParser.parsePredicate(text, arguments: Array((["name", 1] as [Value]).prefix(specifiers)), variables: ["v": 3]) else { return }
            _ = try? PredicateEvaluator().evaluate(predicate, object: .string("self"))
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
        case .modelJSON:
            _ = try? ModelReader.model(fromJSON: text)
        case .mappingJSON:
            _ = try? MappingModel.fromJSON(text)
        case .binaryPlist:
            if let value = try? BinaryPropertyList.decode(bytes) {
                _ = try? BinaryPropertyList.decode(BinaryPropertyList.encode(value))
            }
        }
    }

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
