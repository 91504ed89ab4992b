package import Foundation

/// JSON coding of journal lines, snapshots and database records: sorted keys for stable diffs,
/// dates as Unix seconds.
package enum StoreCoding {
    /// The encoder every store writes records with.
    package static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .secondsSince1970
        return e
    }

    /// The matching decoder.
    package static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .secondsSince1970
        return d
    }
}
