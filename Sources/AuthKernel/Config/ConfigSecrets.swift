package import AuthStorage
import Foundation

/// Which configuration values are secrets, and how a value is shown where authd shows
/// configuration: `authd check`, `authd settings` and the console (contract §17).
///
/// A value is secret when it is declared so (the kernel's own ``kernel``, a provider's
/// ``Setting/isSecret``) or when its key's name says so (``isSecretName(_:)``): it is shown as
/// `[redacted]`. A key that ends in `_file` names the file a secret is read from: its path is
/// shown, the file's contents never are. A URL's password is shown as `***`. The name rule looks
/// at leaves only, so a section (the `password` provider's `password.min_length`, the kernel's
/// `api_keys.max_per_user`) is never hidden for its name.
package struct ConfigSecrets: Sendable {
    /// The kernel's own settings whose values are secrets.
    package static let kernel: Set<String> = ["mail.smtp.password", "push.apns.private_key_path"]

    /// What stands for a secret.
    package static let mark = "[redacted]"

    /// Dotted paths declared secret (an array's elements as `[]`): the kernel's and the providers'.
    package let declared: Set<String>

    /// The kernel's secrets and those `providers` declare, at `SECTION.KEY`.
    package init(providers: [any AuthProvider.Type] = []) {
        declared = Self.kernel.union(providers.flatMap { type in type.settings.filter(\.isSecret).map { "\(type.configSection).\($0.key)" } })
    }

    /// Whether a leaf key's name marks a secret: it holds `secret`, `password`, `api_key` or
    /// `private_key`, and does not end in `_file` (a path, shown).
    package static func isSecretName(_ key: String) -> Bool {
        let key = key.lowercased()
        guard !key.hasSuffix("_file") else { return false }
        return ["secret", "password", "api_key", "private_key"].contains { key.contains($0) }
    }

    /// Whether the value at `path`, a leaf, is a secret: declared so, inside a declared one, or so
    /// named. A `_file` key never is (its path is shown).
    package func isSecret(_ path: String) -> Bool {
        let key = Self.leaf(path)
        guard !key.hasSuffix("_file") else { return false }
        return isDeclared(path) || Self.isSecretName(key)
    }

    /// `value` as authd shows it: a secret as `[redacted]`, a URL's password as `***`, an object
    /// or a list key by key.
    package func redacted(_ path: String, _ value: JSONValue) -> JSONValue {
        let key = Self.leaf(path)
        if key.hasSuffix("_file") { return value }
        if isDeclared(path) { return .string(Self.mark) }
        switch value {
        case .object(let o): return .object(Dictionary(uniqueKeysWithValues: o.map { ($0.key, redacted(path + "." + $0.key, $0.value)) }))
        case _ where Self.isSecretName(key): return .string(Self.mark)
        case .array(let items): return .array(items.map { redacted(path + "[]", $0) })
        case .string(let s): return .string(Self.redactedURL(s))
        default: return value
        }
    }

    /// `text` with the password of a URL in it as `***` (`postgres://authd:***@db/authd`); other
    /// text as it is.
    package static func redactedURL(_ text: String) -> String {
        // The user info ends at the last `@`: a password may hold `@` or `/` itself. Hiding too much
        // of an odd URL is the safe side.
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") else { return text }
        let userInfo = text[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<text.index(after: colon)]) + "***" + String(text[at...])
    }

    /// Whether `path`, or an object holding it, is declared secret.
    private func isDeclared(_ path: String) -> Bool {
        var current = ConfigSection.withoutIndices(path)
        while true {
            if declared.contains(current) { return true }
            guard let dot = current.lastIndex(of: ".") else { return false }
            current = String(current[..<dot])
        }
    }

    /// The last key of a dotted path, without an array index (`webhooks[0].secret_file`: `secret_file`).
    private static func leaf(_ path: String) -> String {
        let last = path.split(separator: ".").last.map(String.init) ?? path
        return String(last.prefix { $0 != "[" })
    }
}
