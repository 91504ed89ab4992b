package import AuthKernel
import Foundation

/// The providers' declared settings as a person reads them: `authd settings`, and the generated
/// part of docs/configuration.md (`authd settings --markdown`, checked by a test).
package enum SettingsReference {
    /// The marker lines around the generated part of docs/configuration.md.
    package static let begin = "<!-- BEGIN provider settings: generated from each provider's `settings` by `authd settings --markdown`; change the declarations, not this part -->"
    package static let end = "<!-- END provider settings -->"

    /// One table per provider that declares settings, in `types` order, between the markers.
    package static func markdown(_ types: [any AuthProvider.Type]) -> String {
        var out = begin + "\n"
        for type in types where !type.settings.isEmpty {
            let starts = type.startsByDefault ? "starts by default" : "starts when `providers` lists it"
            out += "\n#### `\(type.configSection)`: the `\(type.id)` provider (\(starts))\n\n"
            out += "| key | kind | default | meaning |\n|---|---|---|---|\n"
            for setting in type.settings {
                let path = "\(type.configSection).\(setting.key)"
                out += "| `\(path)` | \(kind(setting, at: path)) | \(shownDefault(setting, at: path)) | \(setting.summary) |\n"
            }
        }
        return out + "\n" + end + "\n"
    }

    /// One line per setting: `SECTION.KEY  KIND  DEFAULT  SUMMARY`.
    package static func text(_ types: [any AuthProvider.Type]) -> String {
        let rows = types.flatMap { type in
            type.settings.map { setting in
                let path = "\(type.configSection).\(setting.key)"
                return [path, kind(setting, at: path), shownDefault(setting, at: path), setting.summary]
            }
        }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            (0..<3).map { row[$0].padding(toLength: widths[$0] + 2, withPad: " ", startingAt: 0) }.joined() + row[3]
        }.joined(separator: "\n") + "\n"
    }

    /// What a setting holds, `, secret` added for a secret (``ConfigSecrets``: declared so, or so named).
    static func kind(_ setting: Setting, at path: String) -> String {
        setting.kind.rawValue + (isSecret(setting, at: path) ? ", secret" : "")
    }

    /// A setting's default as listed: a secret's as `[redacted]`, unless it is none (nothing to hide).
    package static func shownDefault(_ setting: Setting, at path: String) -> String {
        guard isSecret(setting, at: path), setting.defaultValue != "none", !setting.defaultValue.hasPrefix("none ") else { return setting.defaultValue }
        return ConfigSecrets.mark
    }

    private static func isSecret(_ setting: Setting, at path: String) -> Bool {
        !path.hasSuffix("_file") && (setting.isSecret || ConfigSecrets().isSecret(path))
    }
}
