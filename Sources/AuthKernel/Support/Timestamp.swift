public import Foundation

/// RFC 3339 timestamps in UTC with whole seconds, as the contract shows them (`2026-01-01T10:00:00Z`).
public enum Timestamp {
    /// Formats a date.
    ///
    /// Written digit by digit: Foundation's `ISO8601FormatStyle` (a calendar and a formatter per call)
    /// was several percent of the server's time on `GET /me` and `POST /refresh`, which show two
    /// timestamps in every user object (profiled). Years outside 1–9999 still go through Foundation.
    public static func string(_ date: Date) -> String {
        let t = date.timeIntervalSince1970.rounded(.down)
        guard t.isFinite, t >= -12_212_553_600, t < 253_402_300_800 else { return foundation(date) }
        let seconds = Int64(t)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(daysSinceEpoch: days)
        return String(unsafeUninitializedCapacity: 20) { out in
            func put(_ value: Int, _ digits: Int, at index: Int) {
                var v = value
                for i in stride(from: index + digits - 1, through: index, by: -1) {
                    out[i] = UInt8(ascii: "0") + UInt8(v % 10)
                    v /= 10
                }
            }
            put(Int(year), 4, at: 0); out[4] = UInt8(ascii: "-")
            put(month, 2, at: 5); out[7] = UInt8(ascii: "-")
            put(day, 2, at: 8); out[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11); out[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 14); out[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17); out[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civil(daysSinceEpoch: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func foundation(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon).timeZone(separator: .omitted))
    }
}
