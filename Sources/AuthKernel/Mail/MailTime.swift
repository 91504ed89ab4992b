public import Foundation

extension Messages {
    /// A moment as a mail names it, in `language` (nil: the task's). English mail writes it as
    /// authd writes times everywhere, "2026-11-28T14:50:46Z"; another language words it by the
    /// catalogs' `kernel.mail.when` from `{{date}}` ("28. November 2026") and `{{time}}`
    /// ("14:50"), both in UTC.
    ///
    /// ```swift
    /// let when = kernel.messages.mailTime(kernel.clock.now(), language: "de")
    /// ```
    public func mailTime(_ date: Date, language: String? = nil) -> String {
        guard let language = available(language ?? Self.language), language != "en" else { return Timestamp.string(date) }
        func format(_ template: String) -> String {
            let formatter = DateFormatter()
            formatter.locale = Self.locale(language)
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.setLocalizedDateFormatFromTemplate(template)
            return formatter.string(from: date)
        }
        return text("kernel.mail.when", ["date": format("dMMMMyyyy"), "time": format("HHmm")], language: language)
    }
}
