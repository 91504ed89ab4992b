import AuthdCore
import AuthKernel
import Foundation
import Logging
import Synchronization

/// `log.format: json`: one JSON object per line on standard error, for log shippers:
/// `{"time","level","label","message", …metadata}` (metadata keys at the top level, e.g. `request.id`).
struct JSONLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level
    let label: String
    private static let output = Mutex(())

    init(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: Any] = [:]
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        for (key, value) in all { fields[key] = Self.plain(value) }
        fields["time"] = LogTime.now()
        fields["level"] = event.level.rawValue
        fields["label"] = label
        let message = event.message.description
        fields["message"] = LogSafe.isPlain(message) ? message : LogSafe.text(message, maxLength: 4096)
        guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        Self.output.withLock { _ in FileHandle.standardError.write(line) }
    }

    private static func plain(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        // JSON escapes C0 controls itself; line separators and bidi controls are escaped too.
        case .string(let s): LogSafe.isPlain(s) ? s : LogSafe.text(s, maxLength: 4096)
        case .stringConvertible(let s): LogSafe.isPlain(s.description) ? s.description : LogSafe.text(s.description, maxLength: 4096)
        case .array(let a): a.map(plain)
        case .dictionary(let d): d.mapValues(plain)
        }
    }
}

enum LogTime {
    static func now() -> String {
        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
