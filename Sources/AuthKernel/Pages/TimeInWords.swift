public import Foundation

/// A time as a person reads it on a page: "3 minutes ago", with the exact time beside it.
enum TimeInWords {
    /// "just now", "5 minutes ago", "2 hours ago", "yesterday", "4 days ago"; older than a month,
    /// the date; a time ahead of `now` (a clock step) reads "just now".
    static func phrase(_ date: Date, now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        switch seconds {
        case ..<60: return "just now"
        case ..<3600: return plural(seconds / 60, "minute") + " ago"
        case ..<86_400: return plural(seconds / 3600, "hour") + " ago"
        case ..<(2 * 86_400): return "yesterday"
        case ..<(31 * 86_400): return plural(seconds / 86_400, "day") + " ago"
        default: return "on " + day(date)
        }
    }

    /// "28 Nov 2026, 11:05 UTC".
    static func exact(_ date: Date) -> String {
        day(date) + ", " + format("HH:mm 'UTC'", date)
    }

    static func day(_ date: Date) -> String { format("d MMM yyyy", date) }

    static func plural(_ n: Int, _ unit: String) -> String { n == 1 ? "1 \(unit)" : "\(n) \(unit)s" }

    static func format(_ pattern: String, _ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
}

extension PageValue {
    /// A time for a template: a section of one row with `words` ("3 minutes ago"), `exact` ("28 Nov
    /// 2026, 11:05 UTC") and `iso` (for `<time datetime>`).
    ///
    /// ```swift
    /// let row: [String: PageValue] = ["added": .time(createdAt, now: kernel.clock.now())]
    /// // {{#added}}<time datetime="{{iso}}" title="{{exact}}">{{words}}</time>{{/added}}
    /// ```
    public static func time(_ date: Date, now: Date) -> PageValue {
        .list([["words": .text(TimeInWords.phrase(date, now: now)), "exact": .text(TimeInWords.exact(date)), "iso": .text(Timestamp.string(date))]])
    }
}
