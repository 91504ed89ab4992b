import Foundation

/// Reads the audit log's lines back, newest first, from the current file and the rotated one.
enum AuditReader {
    struct Entry: Sendable {
        var time: String
        var event: String
        var provider: String?
        var userID: String?
        var account: String?
        var ip: String?
        var reason: String?
    }

    /// The most read: the files are rotated at `audit.max_bytes` (16 MiB by default).
    static let maxBytes = 64 << 20

    static func entries(in paths: [String]) -> [Entry] {
        var out: [Entry] = []
        var budget = maxBytes
        for path in paths {
            guard budget > 0, let handle = FileHandle(forReadingAtPath: path) else { continue }
            defer { try? handle.close() }
            let size = (try? handle.seekToEnd()) ?? 0
            try? handle.seek(toOffset: size > UInt64(budget) ? size - UInt64(budget) : 0)
            guard let data = try? handle.readToEnd() else { continue }
            budget -= data.count
            var lines: [Entry] = []
            for line in data.split(separator: 0x0A) where line.count < 8192 {
                guard let o = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], let time = o["time"] as? String,
                    let event = o["event"] as? String
                else { continue }
                lines.append(Entry(
                    time: time, event: event, provider: o["provider"] as? String, userID: o["user_id"] as? String, account: o["account"] as? String,
                    ip: o["ip"] as? String, reason: o["reason"] as? String))
            }
            out += lines.reversed()
        }
        return out
    }
}
