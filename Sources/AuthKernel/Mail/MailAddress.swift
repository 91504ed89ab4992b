/// A mailbox as written in a header: an optional display name and an address, e.g. `authd <no-reply@example.com>`.
package struct MailAddress: Sendable, Equatable {
    /// The display name, if any.
    package var name: String?
    /// The address.
    package var address: String

    /// Parses `Name <addr>` or a bare `addr`.
    /// - Throws: ``MailError/headerInjection(field:)`` for CR, LF or other control characters, or a malformed mailbox.
    package init(parsing raw: String, field: String) throws(MailError) {
        guard !raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .headerInjection(field: field)
        }
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        if let open = trimmed.lastIndex(of: "<"), trimmed.hasSuffix(">") {
            let name = trimmed[..<open].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            self.name = name.isEmpty ? nil : name
            address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
        } else {
            name = nil
            address = trimmed
        }
        let parts = address.split(separator: "@")
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !address.contains(where: { $0 == " " || $0 == "<" || $0 == ">" || $0 == "\"" }) else {
            throw .headerInjection(field: field)
        }
    }

    /// The domain part, for `Message-ID`.
    package var domain: String { String(address.split(separator: "@").last ?? "localhost") }
}

import Foundation
