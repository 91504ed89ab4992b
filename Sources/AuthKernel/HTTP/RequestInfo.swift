package import Logging

/// Who is asking, for the duration of one request: its id and the client's address. Set by
/// `RequestInfoMiddleware` as a task-local, so log lines and audit events written anywhere below
/// the route (kernel services, providers, tasks they start) carry them without passing them along.
package struct RequestInfo: Sendable {
    /// A random id, also sent back as `X-Request-Id`.
    package var id: String
    /// The client's IP address (the peer, or what a trusted proxy forwarded).
    package var clientIP: String

    /// Creates the information for one request.
    package init(id: String, clientIP: String) {
        self.id = id
        self.clientIP = clientIP
    }

    /// The request being handled by the current task, if any.
    @TaskLocal package static var current: RequestInfo?

    /// Adds `request.id` to every log line written while a request is handled (install with
    /// `LoggingSystem.bootstrap(_:metadataProvider:)`).
    package static let metadataProvider = Logger.MetadataProvider {
        guard let info = RequestInfo.current else { return [:] }
        return ["request.id": .string(info.id)]
    }
}
