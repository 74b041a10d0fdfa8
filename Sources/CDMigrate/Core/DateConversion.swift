/// Calendar arithmetic for dates stored as seconds since 2001-01-01 UTC (no Foundation).
package enum DateConversion {
    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    package static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff]]` with an optional `Z` or `±HH:MM`
    /// (no offset means UTC); returns seconds since 2001-01-01 UTC.
    package static func parseISO8601(_ text: String) -> Double? {
        let chars = Array(text.utf8)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= chars.count else { return nil }
            var n = 0
            for k in 0..<digits {
                let c = chars[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                n = n * 10 + Int(c - 48)
            }
            i += digits
            return n
        }
        func expect(_ c: Character) -> Bool {
            guard i < chars.count, chars[i] == c.asciiValue else { return false }
            i += 1
            return true
        }
        var negativeYear = false
        if i < chars.count && chars[i] == UInt8(ascii: "-") {
            negativeYear = true
            i += 1
        }
        guard var year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        if negativeYear { year = -year }
        // Reject days the month does not have (2017-02-30), rather than rolling into the next month.
        let (_, checkedMonth, checkedDay) = civilFromDays(daysFromCivil(year: year, month: month, day: day))
        guard checkedMonth == month, checkedDay == day else { return nil }
        var seconds = 0.0
        if i < chars.count && (chars[i] == UInt8(ascii: "T") || chars[i] == UInt8(ascii: " ")) {
            i += 1
            guard let hour = number(2), expect(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
            seconds = Double(hour * 3600 + minute * 60)
            if expect(":") {
                guard let second = number(2), second <= 60 else { return nil }
                seconds += Double(second)
                if expect(".") {
                    // The fraction as one integer over a power of ten: summing digit by digit drifts.
                    var numerator = 0.0
                    var denominator = 1.0
                    var digits = 0
                    while i < chars.count, chars[i] >= 48, chars[i] <= 57 {
                        if digits < 15 {
                            numerator = numerator * 10 + Double(chars[i] - 48)
                            denominator *= 10
                        }
                        i += 1
                        digits += 1
                    }
                    if digits == 0 { return nil }
                    seconds += numerator / denominator
                }
            }
            if i < chars.count {
                if expect("Z") {
                } else if chars[i] == UInt8(ascii: "+") || chars[i] == UInt8(ascii: "-") {
                    let sign: Double = chars[i] == UInt8(ascii: "+") ? 1 : -1
                    i += 1
                    guard let oh = number(2) else { return nil }
                    _ = expect(":")
                    guard let om = number(2) else { return nil }
                    seconds -= sign * Double(oh * 3600 + om * 60)
                } else {
                    return nil
                }
            }
        }
        guard i == chars.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Double(days) * 86400 + seconds - Value.referenceDateOffset
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff]Z` for seconds since 2001.
    /// Dates that are not finite or lie beyond years ±999,999 (which no calendar text can show)
    /// come back as their number of seconds.
    package static func formatISO8601(_ referenceSeconds: Double) -> String {
        guard referenceSeconds.isFinite, abs(referenceSeconds) < 3.1e13 else { return Value.format(referenceSeconds) }
        let unix = referenceSeconds + Value.referenceDateOffset
        let wholeSeconds = unix.rounded(.down)
        var fraction = unix - wholeSeconds
        var total = Int(wholeSeconds)
        var millis = Int((fraction * 1000).rounded())
        if millis == 1000 {
            total += 1
            millis = 0
            fraction = 0
        }
        let days = total >= 0 ? total / 86400 : (total - 86399) / 86400
        let secondOfDay = total - days * 86400
        let (y, m, d) = civilFromDays(days)
        func pad(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        // Years before 1 BC keep the sign in front of the padding (-0044), as ISO 8601 writes them.
        var text =
            "\(y < 0 ? "-" + pad(-y, 4) : pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if millis != 0 { text += "." + pad(millis, 3) }
        return text + "Z"
    }
}
