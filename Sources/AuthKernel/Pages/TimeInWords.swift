public import Foundation

/// A time as a person reads it on a page, in the request's language: "3 minutes ago", with the
/// exact time beside it.
enum TimeInWords {
    /// "just now", "5 minutes ago", "2 hours ago", "yesterday", "4 days ago"; older than a month,
    /// the date; a time ahead of `now` (a clock step) reads "just now".
    static func phrase(_ date: Date, now: Date, messages: Messages) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        switch seconds {
        case ..<60: return messages.text("kernel.time.just_now")
        case ..<3600: return messages.plural("kernel.time.minutes_ago", count: seconds / 60)
        case ..<86_400: return messages.plural("kernel.time.hours_ago", count: seconds / 3600)
        case ..<(2 * 86_400): return messages.text("kernel.time.yesterday")
        case ..<(31 * 86_400): return messages.plural("kernel.time.days_ago", count: seconds / 86_400)
        default: return messages.text("kernel.time.on_day", ["day": day(date)])
        }
    }

    /// "28 Nov 2026, 11:05 UTC"; German "28.11.2026, 11:05 UTC".
    static func exact(_ date: Date) -> String {
        day(date) + ", " + format("HHmm", date) + " UTC"
    }

    /// The day as the language writes it: "28 Nov 2026", "28.11.2026".
    static func day(_ date: Date) -> String { format("dMMMyyyy", date) }

    static func format(_ template: String, _ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Messages.locale(Messages.language)
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.setLocalizedDateFormatFromTemplate(template)
        return formatter.string(from: date)
    }
}

extension PageValue {
    /// A time for a template, in the request's language: a section of one row with `words` ("3
    /// minutes ago"), `exact` ("28 Nov 2026, 11:05 UTC") and `iso` (for `<time datetime>`).
    ///
    /// ```swift
    /// let row: [String: PageValue] = ["added": .time(createdAt, now: kernel.clock.now(), messages: kernel.messages)]
    /// // {{#added}}<time datetime="{{iso}}" title="{{exact}}">{{words}}</time>{{/added}}
    /// ```
    public static func time(_ date: Date, now: Date, messages: Messages) -> PageValue {
        .list([
            [
                "words": .text(TimeInWords.phrase(date, now: now, messages: messages)), "exact": .text(TimeInWords.exact(date)),
                "iso": .text(Timestamp.string(date)),
            ]
        ])
    }

    /// The same, from the kernel's catalogs alone (an operator's `DATA/locales/` not read).
    @available(*, deprecated, renamed: "time(_:now:messages:)")
    public static func time(_ date: Date, now: Date) -> PageValue { time(date, now: now, messages: kernelOnly) }

    private static let kernelOnly = Messages(folder: nil)
}
