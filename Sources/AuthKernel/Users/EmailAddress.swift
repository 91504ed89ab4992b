/// A syntactically reasonable email address, case-folded.
///
/// Not the full RFC 5322 grammar (quoted local parts, comments and IP literals are refused: no real
/// inbox needs them and they are where header injection hides) but every address people use:
/// `local@domain.tld` with the usual characters, at most 254 characters in all, 64 in the local part.
public struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The case-folded address.
    public let value: String

    /// Longest address accepted (RFC 5321 path limit less the brackets).
    public static let maxLength = 254

    private static let localCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-/=?^_`{|}~.".unicodeScalars)
    private static let domainCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789-".unicodeScalars)

    /// Parses and case-folds an address; nil when it is not acceptable. The rule is exactly the
    /// `EmailAddress` schema's in `/openapi.yaml`: ASCII; spaces and tabs around it ignored; a
    /// dot-atom local part of 1–64 characters; two or more domain labels of 1–63 letters, digits
    /// and inner hyphens, the last of at least two characters and starting with a letter.
    public init?(_ raw: String) {
        // As sent, counted the way the schema's `maxLength` counts (code points), before trimming.
        guard raw.unicodeScalars.count <= Self.maxLength, raw.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let trimmed = raw.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        let s = String(decoding: trimmed, as: UTF8.self).lowercased()
        guard !s.isEmpty else { return nil }
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let local = parts[0], domain = parts[1]
        guard (1...64).contains(local.utf8.count),
            local.unicodeScalars.allSatisfy(Self.localCharacters.contains),
            !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..")
        else { return nil }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return nil }
        for label in labels {
            guard (1...63).contains(label.utf8.count),
                label.unicodeScalars.allSatisfy(Self.domainCharacters.contains),
                !label.hasPrefix("-"), !label.hasSuffix("-")
            else { return nil }
        }
        guard let tld = labels.last, tld.utf8.count >= 2, let first = tld.utf8.first, first >= 0x61, first <= 0x7A else { return nil }
        value = s
    }

    /// The text shown for it.
    public var description: String { value }
}

import AuthStorage
import Foundation
