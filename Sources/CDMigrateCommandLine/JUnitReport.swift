import CDMigrate

#if canImport(Glibc)
    import Glibc
#endif

/// A run's results as JUnit XML, the report format CI systems read (GitHub Actions' test
/// reporters, GitLab's `artifacts:reports:junit`, Jenkins): `check --junit FILE` and folder
/// `migrate --junit FILE`. One `<testsuite>` (inside `<testsuites>`), one `<testcase>` per store
/// with its time in seconds; a failed store has `<failure message="error CODE: message"
/// type="NAME">` with the whole error as text, a store whose process crashed `<error>`, a file
/// that is not a store (or a store a cancelled run never started) `<skipped message="…"/>`.
///
/// The format is the one Jenkins' JUnit plugin and its users write (the de facto schema,
/// https://github.com/testmoapp/junitxml). Text is escaped for XML 1.0: `&`, `<`, `>`, `"` and
/// `'` as entities, tabs and line breaks in attributes as character references, and the
/// characters XML 1.0 cannot hold (control characters) as U+FFFD.
struct JUnitReport {
    /// How one test case ended.
    enum Outcome {
        case passed
        /// The store failed: `message` is the one-line error, `type` its code's name, `detail` all of it.
        case failure(message: String, type: String, detail: String)
        /// The store's process died without a result.
        case error(message: String, type: String, detail: String)
        /// Not a store, or not started.
        case skipped(message: String)
    }

    struct TestCase {
        /// The store's name as the output names it (its file name, or the path given).
        var name: String
        /// The store's path.
        var file: String
        /// Seconds spent on it.
        var time: Double
        var outcome: Outcome
        /// Printed for the store (its report line), as `<system-out>`.
        var output: String = ""
    }

    /// The suite's name: the command (`cdmigrate check`, `cdmigrate migrate`).
    var name: String
    /// The test cases' class name (JUnit's test class; CI systems group by it).
    var className: String
    /// Name–value pairs shown with the suite (the model set, the target version).
    var properties: [(String, String)] = []
    var cases: [TestCase] = []
    /// When the run started, seconds since 1970.
    var started: Double
    /// Seconds the whole run took.
    var time: Double = 0

    /// The document.
    var xml: String {
        let failures = cases.filter { if case .failure = $0.outcome { return true } else { return false } }.count
        let errors = cases.filter { if case .error = $0.outcome { return true } else { return false } }.count
        let skipped = cases.filter { if case .skipped = $0.outcome { return true } else { return false } }.count
        let counts =
            "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\""
            + " time=\"\(Self.seconds(time))\""
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        text += "<testsuites name=\"\(Self.escaped(name))\" \(counts)>\n"
        text += "  <testsuite name=\"\(Self.escaped(name))\" \(counts) timestamp=\"\(Self.timestamp(started))\">\n"
        if !properties.isEmpty {
            text += "    <properties>\n"
            for (key, value) in properties {
                text += "      <property name=\"\(Self.escaped(key))\" value=\"\(Self.escaped(value))\"/>\n"
            }
            text += "    </properties>\n"
        }
        for testCase in cases {
            text +=
                "    <testcase classname=\"\(Self.escaped(className))\" name=\"\(Self.escaped(testCase.name))\""
                + " file=\"\(Self.escaped(testCase.file))\" time=\"\(Self.seconds(testCase.time))\""
            var body = ""
            switch testCase.outcome {
            case .passed:
                break
            case .failure(let message, let type, let detail), .error(let message, let type, let detail):
                let element: String
                if case .failure = testCase.outcome { element = "failure" } else { element = "error" }
                body +=
                    "      <\(element) message=\"\(Self.escaped(message))\" type=\"\(Self.escaped(type))\">"
                    + Self.escaped(detail, inAttribute: false) + "</\(element)>\n"
            case .skipped(let message):
                body += "      <skipped message=\"\(Self.escaped(message))\"/>\n"
            }
            if !testCase.output.isEmpty {
                body += "      <system-out>" + Self.escaped(testCase.output, inAttribute: false) + "</system-out>\n"
            }
            text += body.isEmpty ? "/>\n" : ">\n" + body + "    </testcase>\n"
        }
        text += "  </testsuite>\n</testsuites>\n"
        return text
    }

    /// A failure's outcome from the error: the one-line message with its code, its code's name,
    /// and the whole error (with the errors under it) as the text.
    static func failure(_ error: MigrationError) -> Outcome {
        .failure(
            message: "error \(error.code.rawValue): \(error.message)", type: error.code.name,
            detail: Output.summary(error))
    }

    /// `text` for XML 1.0 element content, or (`inAttribute`) an attribute value in double or
    /// single quotes, where tabs and line breaks are written as references so that they survive
    /// the parser's attribute normalisation.
    static func escaped(_ text: String, inAttribute: Bool = true) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += inAttribute ? "&quot;" : "\""
            case "'": result += inAttribute ? "&apos;" : "'"
            case "\t": result += inAttribute ? "&#9;" : "\t"
            case "\n": result += inAttribute ? "&#10;" : "\n"
            case "\r": result += "&#13;"
            default:
                // XML 1.0's Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
                let value = scalar.value
                let allowed =
                    (0x20...0xD7FF).contains(value) || (0xE000...0xFFFD).contains(value) || value >= 0x10000
                result.unicodeScalars.append(allowed ? scalar : "\u{FFFD}")
            }
        }
        return result
    }

    /// Seconds with three decimals ("1.250").
    static func seconds(_ value: Double) -> String {
        let milliseconds = Int((max(0, value) * 1000).rounded())
        let fraction = milliseconds % 1000
        let digits = String(fraction)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - digits.count) + digits
    }

    /// ISO 8601 in UTC, to the second ("2026-11-26T21:41:54Z").
    static func timestamp(_ secondsSince1970: Double) -> String {
        var time = time_t(secondsSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Refuses, before a run, a report file that could not be written at its end: its folder
    /// missing or not writable, or the path a folder.
    /// - Throws: `MigrationError` `.io` naming the file.
    static func checkWritable(_ path: String) throws {
        if FileIO.isDirectory(path) {
            throw MigrationError(.io, "cannot write the JUnit report '\(path)': it is a folder")
        }
        let folder = FileIO.directory(of: path)
        if access(folder.isEmpty ? "." : folder, W_OK | X_OK) != 0 {
            throw MigrationError(
                .io, "cannot write the JUnit report '\(path)': \(String(cString: strerror(errno))) ('\(folder)')")
        }
    }

    /// Writes the document to `path` atomically: into a new file beside it, flushed to disk, then
    /// renamed over `path`, so a reader (a CI step, a second run) sees the old report or the
    /// whole new one, never part of it. The file gets the mode the umask gives a new file.
    /// - Throws: `MigrationError` `.io` naming the file.
    func write(to path: String) throws {
        let folder = FileIO.directory(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var template = Array(((folder.isEmpty ? "." : folder) + "/." + name + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else {
            throw MigrationError(.io, "cannot write the JUnit report '\(path)': \(String(cString: strerror(errno)))")
        }
        let temporary = String(cString: template)
        let bytes = Array(xml.utf8)
        var written = 0
        var failure: Int32 = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            written += n
        }
        let mask = umask(0)
        umask(mask)
        if failure == 0 && fchmod(fd, 0o666 & ~mask) != 0 { failure = errno }
        if failure == 0 && fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw MigrationError(.io, "cannot write the JUnit report '\(path)': \(String(cString: strerror(failure)))")
        }
    }
}
