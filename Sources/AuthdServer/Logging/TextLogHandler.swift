import AuthdCore
import AuthKernel
import Logging

/// `log.format: text`: swift-log's standard-error lines, with every message and metadata value
/// escaped (``LogSafe``) so that no value, whoever chose it, can end a line and forge the next one.
struct TextLogHandler: LogHandler {
    var inner: StreamLogHandler

    init(label: String, metadataProvider: Logger.MetadataProvider?) {
        inner = StreamLogHandler.standardError(label: label, metadataProvider: metadataProvider.map(Self.escaping))
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }
    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }
    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue.map(Self.escaping) }
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue.map(Self.escape) }
    }

    func log(event: LogEvent) {
        var event = event
        let message = event.message.description
        if !LogSafe.isPlain(message) { event.message = "\(LogSafe.text(message, maxLength: 4096))" }
        event.metadata = event.metadata?.mapValues(Self.escape)
        inner.log(event: event)
    }

    static func escape(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let s): LogSafe.isPlain(s) ? value : .string(LogSafe.text(s, maxLength: 4096))
        case .stringConvertible(let c):
            LogSafe.isPlain(c.description) ? value : .string(LogSafe.text(c.description, maxLength: 4096))
        case .array(let a): .array(a.map(escape))
        case .dictionary(let d): .dictionary(d.mapValues(escape))
        }
    }

    static func escaping(_ provider: Logger.MetadataProvider) -> Logger.MetadataProvider {
        Logger.MetadataProvider { provider.get().mapValues(escape) }
    }
}
