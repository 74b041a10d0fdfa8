import CDMigrate

/// What `DateFormatter` with `dateStyle = .medium, timeStyle = .medium` prints for the en_US
/// locale, computed without Foundation and always in UTC: "Sep 12, 2017 at 12:55:13 PM".
///
/// Fractions of a second are dropped (as the formatter does); the space before AM/PM is a plain
/// space (recent ICU versions print U+202F there), so the text is the same on every platform.
///
/// A date is a Double of seconds since 2001 (as Core Data stores it), so any year prints: year
/// 11507 is "Jan 1, 11507 at …" in Swift, C and Python alike (no calendar type with a year
/// limit is involved). Only what no calendar can print — not finite, or more than
/// `limit` seconds (about 31.7 million years) from 2001 — has no text (nil).
public enum MediumDateFormat {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `referenceSeconds`: seconds since 2001-01-01 00:00:00 UTC, as Core Data stores dates.
    public static let limit = 1e15

    public static func string(fromReferenceSeconds referenceSeconds: Double) -> String? {
        guard referenceSeconds.isFinite, abs(referenceSeconds) <= limit else { return nil }
        let unix = (referenceSeconds + Value.referenceDateOffset).rounded(.down)
        let total = Int(unix)
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = total - days * 86_400
        let (year, month, day) = DateConversion.civilFromDays(days)
        let hour = secondOfDay / 3_600, minute = secondOfDay / 60 % 60, second = secondOfDay % 60
        let hour12 = hour % 12 == 0 ? 12 : hour % 12
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(months[month - 1]) \(day), \(year) at \(hour12):\(two(minute)):\(two(second)) \(hour < 12 ? "AM" : "PM")"
    }
}
