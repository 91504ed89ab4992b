public import Foundation

/// RFC 3339 timestamps in UTC with whole seconds, as the contract shows them (`2026-01-01T10:00:00Z`).
public enum Timestamp {
    /// Formats a date.
    public static func string(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon).timeZone(separator: .omitted))
    }
}
